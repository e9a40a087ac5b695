// SPDX-License-Identifier: GPL-2.0-only
// Free space tree bitmaps (kernel free-space-tree.c): a FREE_SPACE_BITMAP
// item (start, FREE_SPACE_BITMAP, length) holds one bit per sector,
// little-endian bit order, bit set = free.
#pragma once
#include <functional>
#include <span>

#include "lib/base/result.h"
#include "lib/format/key.h"

namespace fsctl::format {

/// Calls `run(start, length)` (logical bytes) for every maximal run of free
/// sectors in the bitmap item `key` with data `bits`. Errors:
/// Errc::corrupt when the data is shorter than length / sectorsize bits.
[[nodiscard]] Status for_each_free_run(const Key& key, std::span<const u8> bits, u32 sectorsize,
                                       const std::function<void(u64, u64)>& run);

}  // namespace fsctl::format
