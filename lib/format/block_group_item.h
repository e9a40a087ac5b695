// SPDX-License-Identifier: GPL-2.0-only
// BLOCK_GROUP_ITEM codec: struct btrfs_block_group_item (kernel btrfs_tree.h;
// key (start, BLOCK_GROUP_ITEM, length) in the block group tree or the
// extent tree) to and from its cpu form. Which tree to search for it:
// lib/ctree/block_group_lookup.h.
#pragma once
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::format {

/// Bytes of a BLOCK_GROUP_ITEM as fsctl and the kernel write it (for sizing leaves).
inline constexpr u32 BLOCK_GROUP_ITEM_SIZE = 24;

/// A BLOCK_GROUP_ITEM in cpu form. The item is 24 bytes; the 36-byte v2 form
/// (REMAP_TREE incompat, never written by fsctl) starts with the same fields.
struct BlockGroupRecord {
  u64 used = 0;            // bytes allocated in the group
  u64 chunk_objectid = 0;  // FIRST_CHUNK_TREE_OBJECTID (256) unless extent-tree-v2
  u64 flags = 0;           // BLOCK_GROUP_* type and profile bits
  bool operator==(const BlockGroupRecord&) const = default;
};

/// Decodes a BLOCK_GROUP_ITEM body. Errors: Errc::corrupt "block group item
/// of N bytes, expect at least 24" when shorter than the 24-byte struct.
[[nodiscard]] Result<BlockGroupRecord> decode_block_group_item(std::span<const u8> data);

/// The 24 bytes of `bg` (kernel insert_block_group_item).
[[nodiscard]] std::vector<u8> encode_block_group_item(const BlockGroupRecord& bg);

/// Overwrites the fields of the item `data` (in a leaf being changed) with
/// `bg`, leaving any bytes past the 24-byte struct alone. Errors: as
/// decode_block_group_item, nothing written.
[[nodiscard]] Status store_block_group_item(std::span<u8> data, const BlockGroupRecord& bg);

}  // namespace fsctl::format
