// SPDX-License-Identifier: GPL-2.0-only
// MemoryDevice: an in-memory BlockDevice for hermetic unit tests, crash tests
// and fuzzing (LevelDB memenv idea). Its contents, a MemoryImage, are sparse
// 4 KiB pages shared copy-on-write between copies, so a crash test copies a
// 256 MiB image per crash point for the cost of its page table.
#pragma once
#include <memory>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "lib/io/block_device.h"

namespace fsctl::io {

/// Bytes of an in-memory device: `size` bytes in pages of PAGE_BYTES, zero
/// until written. A copy shares every page with the original until either
/// writes it (then that page alone is copied). Reads may run on several
/// threads at once, and with writes (a lock per image).
class MemoryImage {
 public:
  static constexpr u64 PAGE_BYTES = 4096;

  /// An image of `size` zero bytes (no page allocated).
  explicit MemoryImage(u64 size = 0);
  /// Copies the page table, not the pages (cheap: a crash test's snapshot).
  MemoryImage(const MemoryImage& other);
  MemoryImage& operator=(const MemoryImage& other);

  [[nodiscard]] u64 size() const { return size_; }
  /// Copies buf.size() bytes at byte offset `physical` into `buf`.
  /// Errors: Errc::corrupt when the range passes the end (as a device read).
  [[nodiscard]] Status read(u64 physical, std::span<u8> buf) const;
  /// Stores `buf` at byte offset `physical`; a page that is shared with a
  /// copy is copied first, a page never written and written with zeros only
  /// stays unallocated. Errors: Errc::invalid_argument past the end.
  [[nodiscard]] Status write(u64 physical, std::span<const u8> buf);
  /// Pages holding data (the memory the image costs, in PAGE_BYTES units).
  [[nodiscard]] u64 pages_allocated() const;

 private:
  using Page = std::vector<u8>;  // PAGE_BYTES bytes
  u64 size_ = 0;
  std::vector<std::shared_ptr<Page>> pages_;  // null: a zero page
  mutable std::shared_mutex mu_;
};

/// A device over `image`, which the caller may keep (to copy what was
/// written, or reopen it after a crash). Reads past the end fail with
/// Errc::corrupt, writes past the end with Errc::invalid_argument; flush does
/// nothing. Logical block size 512. REQUIRES: `image` is not null.
[[nodiscard]] std::unique_ptr<BlockDevice> make_memory_device(std::shared_ptr<MemoryImage> image,
                                                              std::string name = "memory");

/// A device over a new image holding `bytes`.
[[nodiscard]] std::unique_ptr<BlockDevice> make_memory_device(std::vector<u8> bytes, std::string name = "memory");

}  // namespace fsctl::io
