// SPDX-License-Identifier: GPL-2.0-only
// AlignedBuffer: an owning byte buffer aligned for O_DIRECT.
#pragma once
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <utility>

#include "lib/base/ints.h"

namespace fsctl::io {

/// Tag of the constructor that leaves the bytes as the allocator gave them:
/// for a buffer a read or a copy fills before anything looks at it (zeroing
/// it first costs a pass over memory, and on fresh pages a fault each).
struct Uninitialized {};

/// Buffer of `size` bytes whose start is aligned to `alignment` (a power of
/// two, at least sizeof(void*)), zero-filled unless made Uninitialized.
/// Move-only.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(std::size_t size, std::size_t alignment, Uninitialized) : size_(size), alignment_(alignment) {
    std::size_t rounded = (size + alignment - 1) / alignment * alignment;
    if (rounded == 0) rounded = alignment;
    data_ = static_cast<u8*>(std::aligned_alloc(alignment, rounded));
    if (!data_) throw std::bad_alloc();
  }
  AlignedBuffer(std::size_t size, std::size_t alignment) : AlignedBuffer(size, alignment, Uninitialized{}) {
    std::memset(data_, 0, (size + alignment - 1) / alignment * alignment);
  }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), alignment_(std::exchange(o.alignment_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      alignment_ = std::exchange(o.alignment_, 0);
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { std::free(data_); }

  u8* data() { return data_; }
  const u8* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t alignment() const { return alignment_; }
  std::span<u8> span() { return {data_, size_}; }
  std::span<const u8> span() const { return {data_, size_}; }

 private:
  u8* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t alignment_ = 0;
};

}  // namespace fsctl::io
