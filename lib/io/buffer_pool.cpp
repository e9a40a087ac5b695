// SPDX-License-Identifier: GPL-2.0-only
// BufferPool (buffer_pool.h): reuse of aligned I/O buffers.
#include "lib/io/buffer_pool.h"

#include <algorithm>
#include <utility>

namespace fsctl::io {

AlignedBuffer BufferPool::take(std::size_t size, std::size_t alignment) {
  {
    std::lock_guard lk(mu_);
    // The smallest kept buffer that fits and is at most twice the size: a
    // one-block read that took a kept 3 MiB buffer held it in its read-ahead
    // slot (64 slots: the pooled buffers of one balance batch reached 66 MiB
    // against an I/O budget of 24).
    std::size_t best = kept_.size();
    for (std::size_t i = 0; i < kept_.size(); ++i) {
      const AlignedBuffer& b = kept_[i];
      if (b.size() >= size && b.size() / 2 <= size && b.alignment() >= alignment && b.alignment() % alignment == 0 &&
          (best == kept_.size() || b.size() < kept_[best].size()))
        best = i;
    }
    if (best < kept_.size()) {
      AlignedBuffer out = std::move(kept_[best]);
      kept_[best] = std::move(kept_.back());
      kept_.pop_back();
      kept_bytes_ -= out.size();
      out_bytes_ += out.size();
      return out;
    }
    // A new buffer: kept ones are freed first while kept + lent + new
    // passes the bound (the largest first), so that the pool's buffers in
    // all stay within it whenever the lent ones do.
    while (!kept_.empty() && kept_bytes_ + out_bytes_ + size > max_kept_) {
      std::size_t largest = 0;
      for (std::size_t i = 1; i < kept_.size(); ++i)
        if (kept_[i].size() > kept_[largest].size()) largest = i;
      kept_bytes_ -= kept_[largest].size();
      kept_[largest] = std::move(kept_.back());
      kept_.pop_back();  // freed here
    }
    out_bytes_ += size;
  }
  return AlignedBuffer(size, alignment, Uninitialized{});
}

void BufferPool::give(AlignedBuffer buf) {
  if (!buf.data()) return;
  std::lock_guard lk(mu_);
  out_bytes_ -= std::min(out_bytes_, buf.size());
  if (kept_bytes_ + out_bytes_ + buf.size() > max_kept_) {
    // Full: drop the smallest kept buffer when the new one is larger (large
    // ones save more faults), else this one.
    std::size_t smallest = kept_.size();
    for (std::size_t i = 0; i < kept_.size(); ++i)
      if (smallest == kept_.size() || kept_[i].size() < kept_[smallest].size()) smallest = i;
    if (smallest == kept_.size() || kept_[smallest].size() >= buf.size() ||
        kept_bytes_ - kept_[smallest].size() + out_bytes_ + buf.size() > max_kept_)
      return;  // buf is freed here
    kept_bytes_ -= kept_[smallest].size();
    kept_[smallest] = std::move(kept_.back());
    kept_.pop_back();
  }
  kept_bytes_ += buf.size();
  kept_.push_back(std::move(buf));
}

std::size_t BufferPool::kept_bytes() const {
  std::lock_guard lk(mu_);
  return kept_bytes_;
}

}  // namespace fsctl::io
