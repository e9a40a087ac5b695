// SPDX-License-Identifier: GPL-2.0-only
// Read-ahead of the coalesced device reads of a streaming batch
// (FsInfo::read_tree_blocks in read_block.cpp; DESIGN.md "Reading": large
// aligned reads in physical order while the blocks already read are verified
// and visited). Internal to lib/fs.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "lib/base/result.h"
#include "lib/io/aligned_buffer.h"
#include "lib/io/buffer_pool.h"
#include "lib/volumes/device_set.h"

namespace fsctl::fs {

/// One coalesced device read of a batch: [start, end) on device `dev`
/// covering placed[first, last).
struct Run {
  const volumes::Device* dev = nullptr;
  u64 start = 0, end = 0;
  std::size_t first = 0, last = 0;
};

/// Checks the blocks of one run just read (`base`: its first byte) and
/// returns one Status per block of the run, in order. Called on a helper
/// thread, several runs at once: it must only read shared state.
using RunVerifier = std::function<std::vector<Status>(const Run& run, const u8* base)>;

/// Reads the runs of a batch ahead of the thread that visits them: a ring
/// of `depth` buffers filled in run order by `workers` helper threads, so the
/// device is busy while blocks are visited, and up to `workers` reads are in
/// flight. With a `verify` function the helper that read a run also checks
/// its blocks (checksum, header, layout: the CPU work of a streaming read,
/// spread over the cores), and the consumer takes the results (verified()). A slot is refilled only after the consumer released
/// it. The destructor stops and joins the helpers, so an early return of the
/// consumer is safe. The buffers come from `pool` and go back to it (the
/// next batch reuses them instead of faulting in fresh pages). REQUIRES: the
/// devices' read_at may be called from several threads at once (pread on
/// one fd; see lib/io); `pool` outlives the prefetcher.
class RunPrefetcher {
 public:
  RunPrefetcher(const std::vector<Run>& runs, u32 align, std::size_t depth, std::size_t workers, io::BufferPool& pool,
                RunVerifier verify = {});
  /// False when no helper thread could be started: read inline instead.
  [[nodiscard]] bool running() const { return !threads_.empty(); }
  ~RunPrefetcher();
  RunPrefetcher(const RunPrefetcher&) = delete;
  RunPrefetcher& operator=(const RunPrefetcher&) = delete;

  /// Waits for run `r` (runs are taken in order) and returns its bytes, or
  /// the read error.
  [[nodiscard]] Result<const u8*> get(std::size_t r);
  /// After a successful get(r): the verify function's Status of each block
  /// of run `r` (empty without a verify function). Valid until release(r).
  [[nodiscard]] const std::vector<Status>& verified(std::size_t r) const { return slots_[r % slots_.size()].verified; }
  /// Gives the slot of run `r` back for run r + depth.
  void release(std::size_t r);

 private:
  static constexpr std::size_t NONE = ~std::size_t{0};
  struct Slot {
    io::AlignedBuffer buf;
    std::size_t filled_run = NONE;
    Status status;
    std::vector<Status> verified;
  };
  void work();

  const std::vector<Run>& runs_;
  u32 align_;
  io::BufferPool& pool_;
  RunVerifier verify_;
  std::vector<Slot> slots_;
  std::mutex mu_;
  std::condition_variable run_read_;   // a slot was filled (the consumer waits)
  std::condition_variable slot_free_;  // a slot was released, or stop (helpers wait)
  std::size_t next_ = 0;      // next run to read
  std::size_t released_ = 0;  // runs [0, released_) are consumed
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: joined before the rest goes away
};

}  // namespace fsctl::fs
