// SPDX-License-Identifier: GPL-2.0-only
// read_tree_block through the cache, mirror by mirror, and the batched
// streaming read used by whole-tree walks (DESIGN.md "Reading": large aligned
// reads in physical order, each block verified as it streams by; the reads
// ahead are run_prefetcher.h's).
#include <algorithm>
#include <cstring>
#include <optional>

#include "lib/fs/fs_info.h"
#include "lib/fs/run_prefetcher.h"

namespace fsctl::fs {
using namespace fsctl::format;

std::string FsInfo::device_name(u64 devid) const {
  const volumes::Device* d = devices_.find(devid);
  return d ? d->path : "devid " + std::to_string(devid) + " (missing)";
}

std::string FsInfo::fs_name() const {
  return devices_.devices().empty() ? std::string("filesystem") : devices_.devices().begin()->second.path;
}

Result<cache::TreeBlockRef> FsInfo::read_mirrors(u64 bytenr, const ctree::ParentCheck& check, int skip_mirror,
                                                 const std::string& skip_problem) {
  join_writeback_of(bytenr);  // on the disk once its writeback is done
  u32 ns = nodesize();
  auto mirrors = chunk_map_.map(bytenr, ns);
  if (!mirrors) return make_error(mirrors.error().context(fs_name() + ": tree block " + std::to_string(bytenr)).about_bytenr(bytenr));
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
    bad_copies_read_ += problems.size();
    if (!problems.empty())
      for (auto& p : problems) reporter_->warning("tree block " + std::to_string(bytenr) + ": bad copy " + p + "; used mirror " + std::to_string(m + 1));
    cache_.insert(blk);
    return cache::TreeBlockRef(blk);
  }
  std::string msg = "tree block " + std::to_string(bytenr) + ": ";
  Errc code = Errc::corrupt;
  for (std::size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
  if (problems.size() == 1 && problems[0].find("csum mismatch") != std::string::npos) code = Errc::csum;
  return make_error(Error{code, 0, msg}.about_bytenr(bytenr));
}

cache::TreeBlockRef FsInfo::cached(u64 bytenr) {
  if (auto hit = cache_.lookup(bytenr)) return hit;
  if (parent_ && !written_bytenrs_.count(bytenr)) return parent_->cache_.lookup(bytenr);
  return nullptr;
}

Result<cache::TreeBlockRef> FsInfo::read_tree_block(u64 bytenr, const ctree::ParentCheck& check) {
  if (auto hit = cached(bytenr)) {
    if (auto r = ctree::check_parent(hit->view(), check); !r)
      return make_error(r.error().context(fs_name() + ": tree block " + std::to_string(bytenr)).about_bytenr(bytenr));
    return hit;
  }
  if (bytenr % sectorsize() != 0)
    return make_error(Error{Errc::corrupt, 0, fs_name() + ": tree block " + std::to_string(bytenr) + ": bytenr not aligned to sectorsize " +
                                                  std::to_string(sectorsize())}.about_bytenr(bytenr));
  return read_mirrors(bytenr, check, -1, {});
}

namespace {

/// Tree blocks handed to visitors without entering the cache are recycled
/// once the visitor has let go of them (use count back to 1), so a streaming
/// pass allocates a handful of blocks instead of one per block read.
class BlockPool {
 public:
  explicit BlockPool(u32 nodesize) : nodesize_(nodesize) {}
  /// A block no one else references, its data sized to nodesize.
  std::shared_ptr<cache::TreeBlock> get() {
    for (std::size_t n = free_.size(); n > 0; --n) {
      auto& b = free_[next_++ % free_.size()];
      if (b.use_count() == 1) {
        b->dirty = false;
        return b;
      }
    }
    auto b = std::make_shared<cache::TreeBlock>();
    b->data.resize(nodesize_);
    if (free_.size() < MAX_POOLED) free_.push_back(b);
    return b;
  }

 private:
  static constexpr std::size_t MAX_POOLED = 64;
  u32 nodesize_;
  std::size_t next_ = 0;
  std::vector<std::shared_ptr<cache::TreeBlock>> free_;
};

}  // namespace

Status FsInfo::read_tree_blocks(std::vector<ctree::BlockRequest> requests,
                                const std::function<Status(const cache::TreeBlockRef&)>& visit, bool keep_in_cache) {
  // Sizes measured with bench/walk.sh (bench/RESULTS.md): reads of a few
  // MiB keep the device streaming; 4 such runs read ahead were no slower
  // than more; 8 reads in flight hide the latency of the one-block runs of
  // node levels. They come out of the I/O budget (set_cache_budget: 24 MiB
  // at the default --cache-size, 3 MiB runs and 12 MiB ahead; 1 MiB and 4
  // MiB at 64M), so that I/O buffers stay inside the memory bound.
  const u64 MAX_RUN = std::clamp<u64>(io_budget_ / 8, 256ULL << 10, 4ULL << 20);  // bytes per coalesced read
  constexpr u64 MAX_GAP = 256ULL << 10;             // bytes of unneeded data worth reading through
  const u64 PREFETCH_BYTES = std::max<u64>(io_budget_ / 2, 2 * MAX_RUN);  // buffer bytes for runs read ahead
  constexpr std::size_t MAX_PREFETCH_RUNS = 64;     // runs read ahead, whatever their size
  constexpr std::size_t PREFETCH_WORKERS = 8;       // reads in flight at most
  u32 ns = nodesize();
  struct Placed {
    u64 devid, physical;
    std::size_t req;
  };
  std::vector<Placed> placed;
  placed.reserve(requests.size());
  // Cached blocks are visited in their physical place among the read ones,
  // so the order of visits does not depend on what the cache holds (callers
  // allocate in visit order: relocation's copies).
  struct Hit {
    u64 devid, physical;
    cache::TreeBlockRef ref;
  };
  std::vector<Hit> hits;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    u64 bytenr = requests[i].bytenr;
    auto m = bytenr % sectorsize() ? Result<std::vector<volumes::PhysicalRange>>(make_error(Errc::corrupt, "unaligned"))
                                   : chunk_map_.map(bytenr, ns);
    if (auto hit = cached(bytenr)) {
      if (auto r = ctree::check_parent(hit->view(), requests[i].check); !r)
        return make_error(r.error().context(fs_name() + ": tree block " + std::to_string(bytenr)).about_bytenr(bytenr));
      if (m && !m->empty())
        hits.push_back({(*m)[0].devid, (*m)[0].physical, std::move(hit)});
      else
        FSCTL_TRY(visit(hit));
      continue;
    }
    join_writeback_of(bytenr);  // on the disk once its writeback is done
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
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return a.devid != b.devid ? a.devid < b.devid : a.physical < b.physical;
  });
  std::size_t next_hit = 0;
  // Visits the cached blocks placed before (devid, physical).
  auto visit_hits_before = [&](u64 devid, u64 physical) -> Status {
    for (; next_hit < hits.size(); ++next_hit) {
      const Hit& h = hits[next_hit];
      if (h.devid > devid || (h.devid == devid && h.physical >= physical)) break;
      FSCTL_TRY(visit(h.ref));
    }
    return {};
  };

  // Coalesce into runs: physically close blocks of one device, read through
  // small gaps, at most MAX_RUN bytes per read, aligned for O_DIRECT.
  std::vector<Run> runs;
  u64 longest = 0;
  u32 align = 4096;
  for (std::size_t i = 0; i < placed.size();) {
    std::size_t j = i + 1;
    u64 end = placed[i].physical + ns;
    while (j < placed.size() && placed[j].devid == placed[i].devid && placed[j].physical >= end &&
           placed[j].physical - end <= MAX_GAP && placed[j].physical + ns - placed[i].physical <= MAX_RUN) {
      end = placed[j].physical + ns;
      ++j;
    }
    const volumes::Device* d = devices_.find(placed[i].devid);
    u32 lbs = d->dev->logical_block_size();
    align = std::max(align, lbs);
    u64 start = placed[i].physical / lbs * lbs;
    u64 aligned_end = (end + lbs - 1) / lbs * lbs;
    if (aligned_end > d->dev->size()) aligned_end = end;  // let the device bounce the tail
    runs.push_back({d, start, aligned_end, i, j});
    longest = std::max(longest, aligned_end - start);
    i = j;
  }
  if (runs.empty()) return visit_hits_before(UINT64_MAX, 0);

  // The checks of one block: pure, so the helper threads run them too.
  auto verify_placed = [&](std::size_t k, const u8* p) {
    const auto& req = requests[placed[k].req];
    return ctree::verify_tree_block({p, ns}, req.bytenr, identity_, req.check);
  };
  // Runs are read ahead by helper threads (RunPrefetcher), which also verify
  // the blocks they read (checksum and layout are most of a streaming
  // read's CPU time: bench/RESULTS.md, profiles of qgroup verify); a batch
  // of one run is read and verified inline.
  std::optional<RunPrefetcher> ahead;
  io::AlignedBuffer inline_buf;
  if (runs.size() > 1) {
    std::size_t depth = std::clamp<std::size_t>(PREFETCH_BYTES / longest, 2, MAX_PREFETCH_RUNS);
    ahead.emplace(runs, align, depth, PREFETCH_WORKERS, io_buffers_, [&](const Run& run, const u8* base) {
      std::vector<Status> out;
      out.reserve(run.last - run.first);
      for (std::size_t k = run.first; k < run.last; ++k) out.push_back(verify_placed(k, base + (placed[k].physical - run.start)));
      return out;
    });
    if (!ahead->running()) ahead.reset();
  }
  if (!ahead) inline_buf = io_buffers_.take(longest, align);
  io::GiveBackOnExit give_back(io_buffers_, inline_buf);
  BlockPool pool(ns);
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const Run& run = runs[r];
    Status rr;
    const u8* base = inline_buf.data();
    if (ahead) {
      auto got = ahead->get(r);
      if (got) base = *got;
      else rr = make_error(got.error());
    } else {
      rr = run.dev->dev->read_at(run.start, inline_buf.span().first(run.end - run.start));
    }
    if (rr) bytes_read_ += run.end - run.start;
    const std::vector<Status>* pre = ahead && rr ? &ahead->verified(r) : nullptr;
    if (pre && pre->size() != run.last - run.first) pre = nullptr;  // the helper could not verify: do it here
    for (std::size_t k = run.first; k < run.last; ++k) {
      FSCTL_TRY(visit_hits_before(placed[k].devid, placed[k].physical));
      const auto& req = requests[placed[k].req];
      const u8* p = base + (placed[k].physical - run.start);
      Status vr = !rr ? Status(make_error(rr.error())) : pre ? (*pre)[k - run.first] : verify_placed(k, p);
      cache::TreeBlockRef ref;
      if (vr) {
        ++blocks_read_;
        std::shared_ptr<cache::TreeBlock> blk;
        if (keep_in_cache) {
          blk = std::make_shared<cache::TreeBlock>();
          blk->data.assign(p, p + ns);
        } else {
          blk = pool.get();
          std::memcpy(blk->data.data(), p, ns);
        }
        blk->bytenr = req.bytenr;
        ref = blk;
        if (keep_in_cache) cache_.insert(ref);
      } else {
        auto again = read_mirrors(req.bytenr, req.check, 0,
                                  "mirror 1 (" + run.dev->path + " physical " + std::to_string(placed[k].physical) +
                                      "): " + vr.error().message);
        if (!again) return make_error(again.error());
        ref = *again;
      }
      FSCTL_TRY(visit(ref));
    }
    if (ahead) ahead->release(r);
  }
  return visit_hits_before(UINT64_MAX, 0);
}

}  // namespace fsctl::fs
