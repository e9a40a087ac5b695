// SPDX-License-Identifier: GPL-2.0-only
// The block-layer half of a commit (DESIGN.md invariant 2, kernel
// transaction.c / disk-io.c write_all_supers): write tree blocks to every
// mirror in coalesced requests, flush, then superblocks of every device.
#include <algorithm>
#include <cerrno>
#include <atomic>
#include <mutex>
#include <new>
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

/// One tree block's copy on one device.
struct Piece {
  u64 devid, physical;
  const cache::TreeBlock* block;
};

/// One device write: adjacent pieces [first, last) of one device.
struct Request {
  const volumes::Device* dev;
  std::size_t first, last;
};

/// Writes `requests` (each the concatenation of its pieces' blocks) with up
/// to WRITE_THREADS in flight: a virtio or NVMe queue serves them in
/// parallel, one at a time each waits for the device's latency. Each writer
/// thread has one buffer of at least `max_request` bytes (one per thread,
/// not per request), taken from and given back to `pool`: a fresh buffer
/// would fault in every page again. Every write completes before the caller
/// flushes and writes superblocks, so their order does not matter for crash
/// consistency (DESIGN.md invariant 2). Errors: the first write error
/// (Errc::io), or Errc::io with ENOMEM for a buffer.
Status write_requests(const std::vector<Piece>& pieces, const std::vector<Request>& requests, u32 ns, u32 align,
                      u64 max_request, io::BufferPool& pool) {
  const std::size_t nthreads = std::min<std::size_t>(WRITE_THREADS, requests.size());
  std::atomic<std::size_t> next{0};
  std::mutex err_mu;
  std::optional<Error> first_error;
  auto fail = [&](Error e) {
    std::lock_guard<std::mutex> g(err_mu);
    if (!first_error) first_error = std::move(e);
  };
  auto worker = [&] {
    io::AlignedBuffer buf;
    io::GiveBackOnExit give_back(pool, buf);
    for (std::size_t k = next++; k < requests.size(); k = next++) {
      {
        std::lock_guard<std::mutex> g(err_mu);
        if (first_error) return;
      }
      const Request& rq = requests[k];
      std::size_t len = (rq.last - rq.first) * ns;
      if (buf.size() < len) {
        pool.give(std::move(buf));
        try {
          buf = pool.take(std::max<std::size_t>(len, max_request), align);
        } catch (const std::bad_alloc&) {  // would end the process from a helper thread
          fail(Error{Errc::io, ENOMEM, "writing tree blocks: no memory for a " + std::to_string(len) + " byte write buffer"});
          return;
        }
      }
      for (std::size_t x = rq.first; x < rq.last; ++x) std::memcpy(buf.data() + (x - rq.first) * ns, pieces[x].block->data.data(), ns);
      if (auto r = rq.dev->dev->write_at(pieces[rq.first].physical, buf.span().first(len)); !r) {
        fail(r.error().context("writing tree blocks"));
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
  return {};
}

}  // namespace

Status FsInfo::write_tree_blocks(std::vector<std::shared_ptr<cache::TreeBlock>> blocks) {
  if (!writable_) return make_error(Errc::invalid_argument, "filesystem was opened read-only");
  PhaseTimer timer(phase_sink());
  // Bytes per write request (each one is a wait for the device); each of the
  // WRITE_THREADS has one such buffer: together half the I/O budget.
  const u64 MAX_REQUEST = std::clamp<u64>(io_budget_ / (2 * WRITE_THREADS), 256ULL << 10, 4ULL << 20);
  u32 ns = nodesize();
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
  std::vector<Request> requests;
  for (std::size_t i = 0; i < pieces.size();) {
    std::size_t j = i + 1;
    while (j < pieces.size() && pieces[j].devid == pieces[i].devid &&
           pieces[j].physical == pieces[j - 1].physical + ns && (j - i + 1) * ns <= MAX_REQUEST)
      ++j;
    requests.push_back({devices_.find(pieces[i].devid), i, j});
    i = j;
  }
  u32 align = 4096;
  for (auto& [devid, d] : devices_.devices()) align = std::max<u32>(align, d.dev->logical_block_size());
  FSCTL_TRY(write_requests(pieces, requests, ns, align, MAX_REQUEST, io_buffers_));
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
