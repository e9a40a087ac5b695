// SPDX-License-Identifier: GPL-2.0-only
// Read-ahead of a streaming batch's device reads by helper threads
// (run_prefetcher.h; DESIGN.md "Reading").
#include "lib/fs/run_prefetcher.h"

#include <algorithm>
#include <cerrno>
#include <new>
#include <system_error>
#include <utility>

namespace fsctl::fs {

RunPrefetcher::RunPrefetcher(const std::vector<Run>& runs, u32 align, std::size_t depth, std::size_t workers,
                             io::BufferPool& pool, RunVerifier verify)
    : runs_(runs), align_(align), pool_(pool), verify_(std::move(verify)), slots_(std::min(depth, runs.size())) {
  workers = std::min(workers, slots_.size());
  for (std::size_t i = 0; i < workers; ++i) {
    // A thread that cannot be started (resource limits) only means fewer
    // reads in flight; with none at all the consumer reads inline.
    try {
      threads_.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      break;
    }
  }
}

RunPrefetcher::~RunPrefetcher() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  slot_free_.notify_all();
  for (auto& t : threads_) t.join();
  for (auto& s : slots_) pool_.give(std::move(s.buf));
}

Result<const u8*> RunPrefetcher::get(std::size_t r) {
  Slot& s = slots_[r % slots_.size()];
  std::unique_lock lk(mu_);
  run_read_.wait(lk, [&] { return s.filled_run == r; });
  if (!s.status) return make_error(s.status.error());
  return static_cast<const u8*>(s.buf.data());
}

void RunPrefetcher::release(std::size_t r) {
  {
    std::lock_guard lk(mu_);
    released_ = r + 1;
  }
  slot_free_.notify_one();
}

void RunPrefetcher::work() {
  std::unique_lock lk(mu_);
  for (;;) {
    slot_free_.wait(lk, [&] { return stop_ || (next_ < runs_.size() && next_ < released_ + slots_.size()); });
    if (stop_) return;
    std::size_t r = next_++;
    Slot& s = slots_[r % slots_.size()];
    lk.unlock();
    const Run& run = runs_[r];
    u64 len = run.end - run.start;
    // Sized on first use, grown when needed (most runs of node levels are
    // one block), from the pool: fresh memory costs a page fault per page.
    Status st;
    try {
      if (s.buf.size() < len) {
        pool_.give(std::move(s.buf));
        s.buf = pool_.take(len, align_);
      }
    } catch (const std::bad_alloc&) {  // would end the process from a helper thread
      st = make_error(Errc::io, run.dev->path + ": no memory for a " + std::to_string(len) + " byte read buffer", ENOMEM);
    }
    if (st) st = run.dev->dev->read_at(run.start, s.buf.span().first(len));
    s.verified.clear();
    if (st && verify_) {
      try {
        s.verified = verify_(run, s.buf.data());
      } catch (const std::bad_alloc&) {  // an error message's string; the consumer verifies itself
        s.verified.clear();
      }
    }
    lk.lock();
    s.status = std::move(st);
    s.filled_run = r;
    run_read_.notify_one();  // the one consumer
  }
}

}  // namespace fsctl::fs
