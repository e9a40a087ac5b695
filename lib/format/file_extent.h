// SPDX-License-Identifier: GPL-2.0-only
// EXTENT_DATA codec: struct btrfs_file_extent_item (kernel btrfs_tree.h; key
// (inode, EXTENT_DATA, file offset) in a subvolume tree) in its three types,
// inline, regular and prealloc. One size rule for every caller (qgroup
// accounting, relocation, dump-tree), the kernel tree checker's
// (tree-checker.c check_extent_data_item).
#pragma once
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::format {

// File extent types (BTRFS_FILE_EXTENT_*).
inline constexpr u8 FILE_EXTENT_INLINE = 0, FILE_EXTENT_REG = 1, FILE_EXTENT_PREALLOC = 2;

/// Bytes of a regular or prealloc file extent item (the whole struct); an
/// inline one is FILE_EXTENT_INLINE_HEADER_SIZE plus its data.
inline constexpr u32 FILE_EXTENT_ITEM_SIZE = 53, FILE_EXTENT_INLINE_HEADER_SIZE = 21;

/// A file extent item in cpu form.
struct FileExtent {
  u64 generation = 0;
  u64 ram_bytes = 0;  // bytes of the extent decompressed
  u8 compression = 0;
  u8 encryption = 0;
  u16 other_encoding = 0;
  u8 type = 0;  // FILE_EXTENT_INLINE, FILE_EXTENT_REG or FILE_EXTENT_PREALLOC (items.h)
  // Regular and prealloc extents (zero for inline ones):
  u64 disk_bytenr = 0;     // logical start of the data extent; 0 = a hole
  u64 disk_num_bytes = 0;  // bytes of the data extent on disk
  u64 offset = 0;          // bytes into the (decompressed) extent where this file range starts
  u64 num_bytes = 0;       // bytes of file this item covers
  // Inline extents: the data after the 21-byte header, a view into the
  // decoded item bytes (valid as long as they are).
  std::span<const u8> inline_data;

  [[nodiscard]] bool is_inline() const;
  /// A regular or prealloc extent that points at a data extent (not a hole).
  [[nodiscard]] bool has_data_extent() const { return !is_inline() && disk_bytenr != 0; }
};

/// Decodes an EXTENT_DATA item. Errors: Errc::corrupt, naming what is wrong:
/// "file extent item of N bytes, expect at least 21" (shorter than the
/// header every type has), "file extent item of type T, expect 0 (inline),
/// 1 (regular) or 2 (prealloc)", "regular|prealloc file extent item of N
/// bytes, expect 53" (those types are exactly the 53-byte struct).
[[nodiscard]] Result<FileExtent> decode_file_extent(std::span<const u8> data);

/// The item bytes of `fe`: the 21-byte header followed by fe.inline_data for
/// an inline extent, else the 53-byte struct. REQUIRES: fe.type <= 2.
[[nodiscard]] std::vector<u8> encode_file_extent(const FileExtent& fe);

}  // namespace fsctl::format
