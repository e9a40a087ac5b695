// SPDX-License-Identifier: GPL-2.0-only
// read_tree_block through the cache, mirror by mirror, and the batched
// streaming read used by whole-tree walks (DESIGN.md "Reading": large aligned
// reads in physical order, each block verified as it streams by).
#include <algorithm>

#include "lib/fs/fs_info.h"
#include "lib/io/aligned_buffer.h"

namespace fsctl::fs {
using namespace fsctl::format;

std::string FsInfo::device_name(u64 devid) const {
  const volumes::Device* d = devices_.find(devid);
  return d ? d->path : "devid " + std::to_string(devid) + " (missing)";
}

Result<cache::TreeBlockRef> FsInfo::read_mirrors(u64 bytenr, const ctree::ParentCheck& check, int skip_mirror,
                                                 const std::string& skip_problem) {
  u32 ns = nodesize();
  auto mirrors = chunk_map_.map(bytenr, ns);
  if (!mirrors) return make_error(mirrors.error().context("tree block " + std::to_string(bytenr)));
  std::vector<std::string> problems;
  if (skip_mirror >= 0) problems.push_back(skip_problem);
  for (std::size_t m = 0; m < mirrors->size(); ++m) {
    if (static_cast<int>(m) == skip_mirror) continue;
    const auto& pr = (*mirrors)[m];
    std::string where = device_name(pr.devid) + " physical " + std::to_string(pr.physical);
    const volumes::Device* d = devices_.find(pr.devid);
    if (!d) {
      problems.push_back("mirror " + std::to_string(m + 1) + " (" + where + "): device missing");
      continue;
    }
    auto blk = std::make_shared<cache::TreeBlock>();
    blk->bytenr = bytenr;
    blk->data.resize(ns);
    auto r = d->dev->read_at(pr.physical, blk->data);
    if (r) {
      bytes_read_ += ns;
      r = ctree::verify_tree_block(blk->data, bytenr, identity_, check);
    }
    if (!r) {
      problems.push_back("mirror " + std::to_string(m + 1) + " (" + where + "): " + r.error().message);
      continue;
    }
    ++blocks_read_;
    if (!problems.empty())
      for (auto& p : problems) reporter_->warning("tree block " + std::to_string(bytenr) + ": bad copy " + p + "; used mirror " + std::to_string(m + 1));
    cache_.insert(blk);
    return cache::TreeBlockRef(blk);
  }
  std::string msg = "tree block " + std::to_string(bytenr) + ": ";
  Errc code = Errc::corrupt;
  for (std::size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
  if (problems.size() == 1 && problems[0].find("csum mismatch") != std::string::npos) code = Errc::csum;
  return make_error(code, msg);
}

Result<cache::TreeBlockRef> FsInfo::read_tree_block(u64 bytenr, const ctree::ParentCheck& check) {
  if (auto hit = cache_.lookup(bytenr)) {
    if (auto r = ctree::check_parent(hit->view(), check); !r)
      return make_error(r.error().context("tree block " + std::to_string(bytenr)));
    return hit;
  }
  if (bytenr % sectorsize() != 0)
    return make_error(Errc::corrupt, "tree block " + std::to_string(bytenr) + ": bytenr not aligned to sectorsize " + std::to_string(sectorsize()));
  return read_mirrors(bytenr, check, -1, {});
}

Status FsInfo::read_tree_blocks(std::vector<ctree::BlockRequest> requests,
                                const std::function<Status(const cache::TreeBlockRef&)>& visit, bool keep_in_cache) {
  constexpr u64 MAX_RUN = 8ULL << 20;  // bytes per coalesced read
  constexpr u64 MAX_GAP = 256ULL << 10;  // bytes of unneeded data worth reading through
  u32 ns = nodesize();
  struct Placed {
    u64 devid, physical;
    std::size_t req;
  };
  std::vector<Placed> placed;
  placed.reserve(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    u64 bytenr = requests[i].bytenr;
    if (auto hit = cache_.lookup(bytenr)) {
      if (auto r = ctree::check_parent(hit->view(), requests[i].check); !r)
        return make_error(r.error().context("tree block " + std::to_string(bytenr)));
      FSCTL_TRY(visit(hit));
      continue;
    }
    auto m = bytenr % sectorsize() ? Result<std::vector<volumes::PhysicalRange>>(make_error(Errc::corrupt, "unaligned"))
                                   : chunk_map_.map(bytenr, ns);
    if (!m || m->empty() || !devices_.find((*m)[0].devid)) {
      // Let the single-block path produce the precise error or use another mirror.
      FSCTL_TRY_ASSIGN(auto b, read_tree_block(bytenr, requests[i].check));
      FSCTL_TRY(visit(b));
      continue;
    }
    placed.push_back({(*m)[0].devid, (*m)[0].physical, i});
  }
  std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
    return a.devid != b.devid ? a.devid < b.devid : a.physical < b.physical;
  });
  std::size_t i = 0;
  while (i < placed.size()) {
    std::size_t j = i + 1;
    u64 end = placed[i].physical + ns;
    while (j < placed.size() && placed[j].devid == placed[i].devid && placed[j].physical >= end &&
           placed[j].physical - end <= MAX_GAP && placed[j].physical + ns - placed[i].physical <= MAX_RUN) {
      end = placed[j].physical + ns;
      ++j;
    }
    const volumes::Device* d = devices_.find(placed[i].devid);
    u32 lbs = d->dev->logical_block_size();
    u64 start = placed[i].physical / lbs * lbs;
    io::AlignedBuffer buf(end - start, std::max<u32>(lbs, 4096));
    auto rr = d->dev->read_at(start, buf.span());
    if (rr) bytes_read_ += end - start;
    for (std::size_t k = i; k < j; ++k) {
      const auto& req = requests[placed[k].req];
      Status vr = rr ? Status{} : Status(make_error(rr.error()));
      auto blk = std::make_shared<cache::TreeBlock>();
      blk->bytenr = req.bytenr;
      if (vr) {
        const u8* p = buf.data() + (placed[k].physical - start);
        blk->data.assign(p, p + ns);
        vr = ctree::verify_tree_block(blk->data, req.bytenr, identity_, req.check);
      }
      cache::TreeBlockRef ref;
      if (vr) {
        ++blocks_read_;
        ref = blk;
        if (keep_in_cache) cache_.insert(ref);
      } else {
        auto again = read_mirrors(req.bytenr, req.check, 0,
                                  "mirror 1 (" + d->path + " physical " + std::to_string(placed[k].physical) + "): " + vr.error().message);
        if (!again) return make_error(again.error());
        ref = *again;
      }
      FSCTL_TRY(visit(ref));
    }
    i = j;
  }
  return {};
}

}  // namespace fsctl::fs
