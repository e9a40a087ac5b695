// SPDX-License-Identifier: GPL-2.0-only
// The block-layer half of a commit (DESIGN.md invariant 2, kernel
// transaction.c / disk-io.c write_all_supers): write tree blocks to every
// mirror in coalesced requests, flush, then superblocks of every device.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <cstdio>
#include <cstring>

#include "lib/base/phase_timer.h"
#include "lib/format/csum.h"
#include "lib/fs/fs_info.h"
#include "lib/io/aligned_buffer.h"

namespace fsctl::fs {
using namespace fsctl::format;

namespace {
constexpr std::size_t WRITE_THREADS = 4;  // write requests in flight
}  // namespace

Status FsInfo::write_tree_blocks(std::vector<std::shared_ptr<cache::TreeBlock>> blocks) {
  if (!writable_) return make_error(Errc::invalid_argument, "filesystem was opened read-only");
  PhaseTimer timer(phase_sink());
  // Bytes per write request (each one is a wait for the device); each of the
  // WRITE_THREADS has one such buffer, so small cache budgets get smaller ones.
  const u64 MAX_REQUEST = std::clamp<u64>(cache_.budget() / 32, 1ULL << 20, 8ULL << 20);
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
  // Coalesced requests: adjacent blocks of one device, at most MAX_REQUEST
  // bytes each.
  struct Request {
    const volumes::Device* dev;
    std::size_t first, last;  // pieces [first, last)
  };
  std::vector<Request> requests;
  for (std::size_t i = 0; i < pieces.size();) {
    std::size_t j = i + 1;
    while (j < pieces.size() && pieces[j].devid == pieces[i].devid &&
           pieces[j].physical == pieces[j - 1].physical + ns && (j - i + 1) * ns <= MAX_REQUEST)
      ++j;
    requests.push_back({devices_.find(pieces[i].devid), i, j});
    i = j;
  }
  // Several requests in flight (a virtio or NVMe queue serves them in
  // parallel; one at a time, each waits for the device's latency): a few
  // writer threads, each with its own buffer (one per thread, not per
  // request: a fresh buffer would fault in every page again). Every write
  // completes before the caller flushes and writes superblocks, so their
  // order does not matter for crash consistency (DESIGN.md invariant 2).
  u32 align = 4096;
  for (auto& [devid, d] : devices_.devices()) align = std::max<u32>(align, d.dev->logical_block_size());
  const std::size_t nthreads = std::min<std::size_t>(WRITE_THREADS, requests.size());
  std::atomic<std::size_t> next{0};
  std::mutex err_mu;
  std::optional<Error> first_error;
  auto worker = [&] {
    io::AlignedBuffer buf;
    for (std::size_t k = next++; k < requests.size(); k = next++) {
      {
        std::lock_guard<std::mutex> g(err_mu);
        if (first_error) return;
      }
      const Request& rq = requests[k];
      std::size_t len = (rq.last - rq.first) * ns;
      if (buf.size() < len) buf = io::AlignedBuffer(std::max<std::size_t>(len, MAX_REQUEST), align);
      for (std::size_t x = rq.first; x < rq.last; ++x) std::memcpy(buf.data() + (x - rq.first) * ns, pieces[x].block->data.data(), ns);
      auto r = rq.dev->dev->write_at(pieces[rq.first].physical, buf.span().first(len));
      if (!r) {
        std::lock_guard<std::mutex> g(err_mu);
        if (!first_error) first_error = r.error().context("writing tree blocks");
        return;
      }
    }
  };
  if (nthreads <= 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < nthreads; ++k) threads.emplace_back(worker);
    for (auto& th : threads) th.join();
  }
  if (first_error) return make_error(*first_error);
  // snprintf, not a chain of std::string operator+: GCC 12 at -O3 warns a
  // false -Wrestrict on "(" + std::to_string(...) (GCC bug 105329).
  char detail[64];
  std::snprintf(detail, sizeof detail, "(%zu blocks, %zu requests)", blocks.size(), requests.size());
  timer.mark("write tree blocks", detail);
  for (auto& b : blocks) {
    b->dirty = false;
    if (parent_) written_bytenrs_.insert(b->bytenr);
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
    std::span<u8> bytes = super_bytes(copy);
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
