// SPDX-License-Identifier: GPL-2.0-only
// BufferPool (buffer_pool.h): reuse of aligned I/O buffers.
#include "lib/io/buffer_pool.h"

#include <utility>

namespace fsctl::io {

AlignedBuffer BufferPool::take(std::size_t size, std::size_t alignment) {
  {
    std::lock_guard lk(mu_);
    // The smallest kept buffer that fits, so that a small request does not
    // take the large one a later large request needs.
    std::size_t best = kept_.size();
    for (std::size_t i = 0; i < kept_.size(); ++i) {
      const AlignedBuffer& b = kept_[i];
      if (b.size() >= size && b.alignment() >= alignment && b.alignment() % alignment == 0 &&
          (best == kept_.size() || b.size() < kept_[best].size()))
        best = i;
    }
    if (best < kept_.size()) {
      AlignedBuffer out = std::move(kept_[best]);
      kept_[best] = std::move(kept_.back());
      kept_.pop_back();
      kept_bytes_ -= out.size();
      return out;
    }
  }
  return AlignedBuffer(size, alignment, Uninitialized{});
}

void BufferPool::give(AlignedBuffer buf) {
  if (!buf.data()) return;
  std::lock_guard lk(mu_);
  if (kept_bytes_ + buf.size() > max_kept_) {
    // Full: drop the smallest kept buffer when the new one is larger (large
    // ones save more faults), else this one.
    std::size_t smallest = kept_.size();
    for (std::size_t i = 0; i < kept_.size(); ++i)
      if (smallest == kept_.size() || kept_[i].size() < kept_[smallest].size()) smallest = i;
    if (smallest == kept_.size() || kept_[smallest].size() >= buf.size() ||
        kept_bytes_ - kept_[smallest].size() + buf.size() > max_kept_)
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
