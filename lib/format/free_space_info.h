// SPDX-License-Identifier: GPL-2.0-only
// FREE_SPACE_INFO codec: struct btrfs_free_space_info (kernel btrfs_tree.h;
// key (start, FREE_SPACE_INFO, length) in the free space tree, one per block
// group: how many free extents it has and whether they are bitmaps).
// The bitmap items themselves: free_space.h.
#pragma once
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::format {

inline constexpr u32 FREE_SPACE_USING_BITMAPS = 1U << 0;  // BTRFS_FREE_SPACE_USING_BITMAPS

/// A FREE_SPACE_INFO in cpu form.
struct FreeSpaceInfoRecord {
  u32 extent_count = 0;  // free extents of the group (in either form)
  u32 flags = 0;         // FREE_SPACE_USING_BITMAPS
  [[nodiscard]] bool using_bitmaps() const { return flags & FREE_SPACE_USING_BITMAPS; }
  bool operator==(const FreeSpaceInfoRecord&) const = default;
};

/// Decodes a FREE_SPACE_INFO body. Errors: Errc::corrupt "FREE_SPACE_INFO of
/// N bytes, expect at least 8".
[[nodiscard]] Result<FreeSpaceInfoRecord> decode_free_space_info(std::span<const u8> data);
/// The 8 bytes of `f` (kernel add_new_free_space_info).
[[nodiscard]] std::vector<u8> encode_free_space_info(const FreeSpaceInfoRecord& f);
/// Writes `f` over the item `data` in place. Errors: as decode_free_space_info.
[[nodiscard]] Status store_free_space_info(std::span<u8> data, const FreeSpaceInfoRecord& f);

}  // namespace fsctl::format
