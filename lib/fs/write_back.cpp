// SPDX-License-Identifier: GPL-2.0-only
// The block-layer half of a commit (DESIGN.md invariant 2, kernel
// transaction.c / disk-io.c write_all_supers): write tree blocks to every
// mirror in coalesced requests, flush, then superblocks of every device.
#include <algorithm>
#include <cstring>

#include "lib/format/csum.h"
#include "lib/fs/fs_info.h"
#include "lib/io/aligned_buffer.h"

namespace fsctl::fs {
using namespace fsctl::format;

Status FsInfo::write_tree_blocks(std::vector<std::shared_ptr<cache::TreeBlock>> blocks) {
  if (!writable_) return make_error(Errc::invalid_argument, "filesystem was opened read-only");
  constexpr u64 MAX_REQUEST = 8ULL << 20;  // bytes per write request (each one is a wait for the device)
  u32 ns = nodesize();
  struct Piece {
    u64 devid, physical;
    const cache::TreeBlock* block;
  };
  std::vector<Piece> pieces;
  for (auto& b : blocks) {
    CsumBytes c = compute_csum(csum_type(), std::span<const u8>(b->data).subspan(CSUM_SIZE_MAX));
    std::memset(b->data.data(), 0, CSUM_SIZE_MAX);
    std::memcpy(b->data.data(), c.data(), csum_size(csum_type()));
    auto m = chunk_map_.map(b->bytenr, ns);
    if (!m) return make_error(m.error().context("writing tree block " + std::to_string(b->bytenr)));
    for (auto& pr : *m) {
      if (!devices_.find(pr.devid))
        return make_error(Errc::not_found, "writing tree block " + std::to_string(b->bytenr) + ": devid " + std::to_string(pr.devid) + " missing");
      pieces.push_back({pr.devid, pr.physical, b.get()});
    }
  }
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    return a.devid != b.devid ? a.devid < b.devid : a.physical < b.physical;
  });
  // One buffer for all requests: a fresh one per request would fault in
  // every page again.
  u32 align = 4096;
  for (auto& [devid, d] : devices_.devices()) align = std::max<u32>(align, d.dev->logical_block_size());
  io::AlignedBuffer buf;
  std::size_t i = 0;
  while (i < pieces.size()) {
    std::size_t j = i + 1;
    while (j < pieces.size() && pieces[j].devid == pieces[i].devid &&
           pieces[j].physical == pieces[j - 1].physical + ns && (j - i + 1) * ns <= MAX_REQUEST)
      ++j;
    const volumes::Device* d = devices_.find(pieces[i].devid);
    std::size_t len = (j - i) * ns;
    if (buf.size() < len) buf = io::AlignedBuffer(std::max<std::size_t>(len, MAX_REQUEST), align);
    for (std::size_t k = i; k < j; ++k) std::memcpy(buf.data() + (k - i) * ns, pieces[k].block->data.data(), ns);
    auto r = d->dev->write_at(pieces[i].physical, buf.span().first(len));
    if (!r) return make_error(r.error().context("writing tree blocks"));
    i = j;
  }
  for (auto& b : blocks) {
    b->dirty = false;
    cache_.insert(b);
  }
  return {};
}

Status FsInfo::flush_devices() {
  for (auto& [devid, d] : devices_.devices()) FSCTL_TRY(d.dev->flush());
  return {};
}

Status FsInfo::write_supers(const SuperBlock& sb) {
  if (!writable_) return make_error(Errc::invalid_argument, "filesystem was opened read-only");
  auto write_copy = [&](const volumes::Device& d, int mirror) -> Status {
    u64 off = super_mirror_offset(mirror);
    if (off + SUPER_INFO_SIZE > d.dev->size()) return {};
    SuperBlock copy = sb;
    if (auto it = dev_items_.find(d.devid); it != dev_items_.end()) copy.dev_item = it->second;
    copy.bytenr.set(off);
    copy.flags.set(copy.flags.get() | HEADER_FLAG_WRITTEN);
    auto bytes = std::span<u8>(reinterpret_cast<u8*>(&copy), SUPER_INFO_SIZE);
    CsumBytes c = compute_csum(copy.csum_type.get(), bytes.subspan(CSUM_SIZE_MAX));
    std::memset(copy.csum, 0, CSUM_SIZE_MAX);
    std::memcpy(copy.csum, c.data(), csum_size(copy.csum_type.get()));
    return d.dev->write_at(off, bytes);
  };
  FSCTL_TRY(flush_devices());
  for (auto& [devid, d] : devices_.devices()) FSCTL_TRY(write_copy(d, 0));
  FSCTL_TRY(flush_devices());
  for (int m = 1; m < SUPER_MIRROR_MAX; ++m)
    for (auto& [devid, d] : devices_.devices()) FSCTL_TRY(write_copy(d, m));
  FSCTL_TRY(flush_devices());
  super_ = sb;
  return {};
}

}  // namespace fsctl::fs
