// SPDX-License-Identifier: GPL-2.0-only
// Free space tree bitmaps (kernel free-space-tree.c): a FREE_SPACE_BITMAP
// item (start, FREE_SPACE_BITMAP, length) holds one bit per sector,
// little-endian bit order (sector i of the item: byte i / 8, bit i % 8),
// bit set = free; and the extent counts at which a block group switches
// between FREE_SPACE_EXTENT items and bitmaps.
#pragma once
#include <functional>
#include <span>

#include "lib/base/result.h"
#include "lib/format/key.h"

namespace fsctl::format {

/// Bytes of a full bitmap item and the sectors it covers (kernel
/// free-space-tree.h BTRFS_FREE_SPACE_BITMAP_SIZE / _BITS). A converted
/// block group gets items of FREE_SPACE_BITMAP_BITS * sectorsize bytes of
/// the group each, the last one shorter.
inline constexpr u32 FREE_SPACE_BITMAP_SIZE = 256;
inline constexpr u32 FREE_SPACE_BITMAP_BITS = FREE_SPACE_BITMAP_SIZE * 8;

/// The extent counts at which a block group's free space changes form
/// (kernel block-group.h bitmap_high_thresh / bitmap_low_thresh).
struct FreeSpaceThresholds {
  u32 bitmap_high_thresh = 0;  // in extent form with more extents than this: convert to bitmaps
  u32 bitmap_low_thresh = 0;   // in bitmap form with fewer extents than this: convert to extents
};

/// The thresholds of a block group of `length` bytes (kernel
/// free-space-tree.c set_free_space_tree_thresholds): bitmaps take
/// ceil(length / (sectorsize * FREE_SPACE_BITMAP_BITS)) items of
/// sizeof(Item) + FREE_SPACE_BITMAP_SIZE leaf bytes; high is that many bytes
/// in header-only extent items (floor); low is high - 100 when high > 100,
/// else 0 (such a group never goes back to extents). REQUIRES: sectorsize > 0.
[[nodiscard]] FreeSpaceThresholds free_space_thresholds(u64 length, u32 sectorsize);

/// Data bytes of a bitmap item covering `length` bytes: one bit per sector,
/// rounded up to whole bytes (kernel free_space_bitmap_size).
/// REQUIRES: sectorsize > 0.
[[nodiscard]] u32 free_space_bitmap_size(u64 length, u32 sectorsize);

/// Calls `run(start, length)` (logical bytes) for every maximal run of free
/// sectors in the bitmap item `key` with data `bits`. Errors:
/// Errc::corrupt when the data is shorter than length / sectorsize bits.
[[nodiscard]] Status for_each_free_run(const Key& key, std::span<const u8> bits, u32 sectorsize,
                                       const std::function<void(u64, u64)>& run);

}  // namespace fsctl::format
