// SPDX-License-Identifier: GPL-2.0-only
// BufferPool: I/O buffers kept between batches of reads and commits.
#pragma once
#include <cstddef>
#include <mutex>
#include <vector>

#include "lib/io/aligned_buffer.h"

namespace fsctl::io {

/// Aligned I/O buffers handed back and reused instead of freed: a buffer of
/// several MiB freed to the C library goes back to the kernel, and the next
/// one faults in every page again (measured: a third of a block group tree
/// conversion's CPU time went to zeroing and faulting in fresh read and
/// write buffers, bench/RESULTS.md). Keeps buffers while the kept ones and
/// those lent out (taken, not given back) stay within `max_kept_bytes`; what
/// is given back beyond that is freed, and a new buffer frees kept ones
/// first. A take is served from a kept buffer at most twice its size. Buffers come
/// uninitialized: the caller fills them (a read or a copy) before use.
/// Thread-safe (the read-ahead and writeback helper threads share one).
class BufferPool {
 public:
  explicit BufferPool(std::size_t max_kept_bytes) : max_kept_(max_kept_bytes) {}
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  /// A buffer of at least `size` bytes aligned to at least `alignment` (a
  /// power of two): a kept one when one fits, else a new one of `size`.
  /// Throws std::bad_alloc as AlignedBuffer does.
  AlignedBuffer take(std::size_t size, std::size_t alignment);
  /// Keeps `buf` for a later take, or frees it when the pool is full.
  void give(AlignedBuffer buf);
  /// Changes the most bytes kept (buffers kept beyond it are freed by the
  /// next give).
  void set_max_kept(std::size_t max_kept_bytes) {
    std::lock_guard lk(mu_);
    max_kept_ = max_kept_bytes;
  }
  /// Bytes of buffers kept now.
  [[nodiscard]] std::size_t kept_bytes() const;

 private:
  std::size_t max_kept_;
  mutable std::mutex mu_;
  std::vector<AlignedBuffer> kept_;
  std::size_t kept_bytes_ = 0;
  std::size_t out_bytes_ = 0;  // lent out (a buffer given back that was not taken counts as lent)
};

/// Gives a buffer back to its pool when the scope ends, whatever the path
/// out of it (an early return on an error included).
class GiveBackOnExit {
 public:
  GiveBackOnExit(BufferPool& pool, AlignedBuffer& buf) : pool_(pool), buf_(buf) {}
  ~GiveBackOnExit() { pool_.give(std::move(buf_)); }
  GiveBackOnExit(const GiveBackOnExit&) = delete;
  GiveBackOnExit& operator=(const GiveBackOnExit&) = delete;

 private:
  BufferPool& pool_;
  AlignedBuffer& buf_;
};

}  // namespace fsctl::io
