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
#include <string>
#include <system_error>
#include <thread>
#include <cstdio>
#include <cstring>

#include "lib/base/phase_timer.h"
#include "lib/format/csum.h"
#include "lib/fs/fs_info.h"
#include "lib/io/aligned_buffer.h"

namespace fsctl::fs {
using namespace fsctl::format;

// Named, not anonymous: FsInfo::Writeback holds them.
namespace write_back_parts {
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
}  // namespace write_back_parts

namespace {
using write_back_parts::Piece;
using write_back_parts::Request;
constexpr std::size_t WRITE_THREADS = 4;  // write requests in flight

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

struct FsInfo::Writeback {
  std::vector<std::shared_ptr<cache::TreeBlock>> blocks;  // held until written; by bytenr when on a helper thread
  std::vector<write_back_parts::Piece> pieces;
  std::vector<write_back_parts::Request> requests;
  u32 ns = 0, align = 4096;
  u64 max_request = 0;
  Status result;
  std::thread thread;
  Writeback() = default;
  Writeback(const Writeback&) = delete;
  Writeback& operator=(const Writeback&) = delete;
  ~Writeback() {
    if (thread.joinable()) thread.join();
  }
};

Status FsInfo::plan_writeback(Writeback& w) {
  if (!writable_) return make_error(Errc::invalid_argument, "filesystem was opened read-only");
  // Bytes per write request (each one is a wait for the device); each of the
  // WRITE_THREADS has one such buffer: together half the I/O budget.
  w.max_request = std::clamp<u64>(io_budget_ / (2 * WRITE_THREADS), 256ULL << 10, 4ULL << 20);
  u32 ns = w.ns = nodesize();
  for (auto& b : w.blocks) {
    CsumBytes c = compute_csum(csum_type(), std::span<const u8>(b->data).subspan(CSUM_SIZE_MAX));
    std::memset(b->data.data(), 0, CSUM_SIZE_MAX);
    std::memcpy(b->data.data(), c.data(), csum_size(csum_type()));
    auto m = chunk_map_.map(b->bytenr, ns);
    if (!m) return make_error(m.error().context("writing tree block " + std::to_string(b->bytenr)));
    for (auto& pr : *m) {
      if (!devices_.find(pr.devid))
        return make_error(Errc::not_found, "writing tree block " + std::to_string(b->bytenr) + ": devid " + std::to_string(pr.devid) + " missing");
      w.pieces.push_back({pr.devid, pr.physical, b.get()});
    }
  }
  std::sort(w.pieces.begin(), w.pieces.end(), [](const Piece& a, const Piece& b) {
    return a.devid != b.devid ? a.devid < b.devid : a.physical < b.physical;
  });
  // Coalesced requests: adjacent blocks of one device, at most max_request
  // bytes each.
  for (std::size_t i = 0; i < w.pieces.size();) {
    std::size_t j = i + 1;
    while (j < w.pieces.size() && w.pieces[j].devid == w.pieces[i].devid &&
           w.pieces[j].physical == w.pieces[j - 1].physical + ns && (j - i + 1) * ns <= w.max_request)
      ++j;
    w.requests.push_back({devices_.find(w.pieces[i].devid), i, j});
    i = j;
  }
  for (auto& [devid, d] : devices_.devices()) w.align = std::max<u32>(w.align, d.dev->logical_block_size());
  return {};
}

void FsInfo::enter_written(Writeback& w) {
  for (auto& b : w.blocks) {
    b->dirty = false;
    if (parent_) written_bytenrs_.insert(b->bytenr);
    cache_.insert(b);
  }
}

namespace {
// snprintf, not a chain of std::string operator+: GCC 12 at -O3 warns a
// false -Wrestrict on "(" + std::to_string(...) (GCC bug 105329).
std::string blocks_and_requests(std::size_t blocks, std::size_t requests) {
  char detail[64];
  std::snprintf(detail, sizeof detail, "(%zu blocks, %zu requests)", blocks, requests);
  return detail;
}
}  // namespace

Status FsInfo::write_tree_blocks(std::vector<std::shared_ptr<cache::TreeBlock>> blocks) {
  FSCTL_TRY(wait_writeback());
  PhaseTimer timer(phase_sink());
  Writeback w;
  w.blocks = std::move(blocks);
  FSCTL_TRY(plan_writeback(w));
  FSCTL_TRY(write_requests(w.pieces, w.requests, w.ns, w.align, w.max_request, io_buffers_));
  timer.mark("write tree blocks", blocks_and_requests(w.blocks.size(), w.requests.size()));
  enter_written(w);
  return {};
}

Status FsInfo::start_write_tree_blocks(std::vector<std::shared_ptr<cache::TreeBlock>> blocks) {
  FSCTL_TRY(wait_writeback());
  PhaseTimer timer(phase_sink());
  auto w = std::make_shared<Writeback>();
  w->blocks = std::move(blocks);
  std::sort(w->blocks.begin(), w->blocks.end(), [](const auto& a, const auto& b) { return a->bytenr < b->bytenr; });
  FSCTL_TRY(plan_writeback(*w));
  // In the cache before they are on the disk: reads of them are served
  // from memory, and one that misses waits (join_writeback_of).
  enter_written(*w);
  auto write = [raw = w.get(), pool = &io_buffers_] {
    raw->result = write_requests(raw->pieces, raw->requests, raw->ns, raw->align, raw->max_request, *pool);
  };
  try {
    w->thread = std::thread(write);
  } catch (const std::system_error&) {  // no thread: write here
    write();
  }
  timer.mark("start writeback", blocks_and_requests(w->blocks.size(), w->requests.size()));
  writeback_ = std::move(w);
  return {};
}

void FsInfo::join_writeback(u64 bytenr) {
  if (!writeback_) return;
  observer_->on_writeback_wait(bytenr);
  PhaseTimer timer(phase_sink());
  if (writeback_->thread.joinable()) writeback_->thread.join();
  if (!writeback_->result && !writeback_error_) writeback_error_ = writeback_->result.error();
  writeback_.reset();
  timer.mark("wait for writeback");
}

void FsInfo::join_writeback_of(u64 bytenr) {
  if (!writeback_) return;
  const auto& blocks = writeback_->blocks;
  auto it = std::lower_bound(blocks.begin(), blocks.end(), bytenr, [](const auto& b, u64 x) { return b->bytenr < x; });
  if (it != blocks.end() && (*it)->bytenr == bytenr) join_writeback(bytenr);
}

Status FsInfo::wait_writeback() {
  join_writeback(0);
  if (!writeback_error_) return {};
  Error e = std::move(*writeback_error_);
  writeback_error_.reset();
  return make_error(std::move(e));
}

Status FsInfo::flush_devices() {
  FSCTL_TRY(wait_writeback());
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
  FSCTL_TRY(flush_devices());  // after the running writeback, if any
  for (auto& [devid, d] : devices_.devices()) FSCTL_TRY(write_copy(d, 0));
  FSCTL_TRY(flush_devices());
  for (int m = 1; m < SUPER_MIRROR_MAX; ++m)
    for (auto& [devid, d] : devices_.devices()) FSCTL_TRY(write_copy(d, m));
  FSCTL_TRY(flush_devices());
  super_ = sb;
  return {};
}

}  // namespace fsctl::fs
