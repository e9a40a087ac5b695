// SPDX-License-Identifier: GPL-2.0-only
// Encoders from cpu structs back into item bytes, for the items the write
// side rebuilds (extent items with their inline backrefs). The inverse of
// decode.h; the layouts are the kernel's (btrfs_tree.h struct
// btrfs_extent_item, btrfs_extent_inline_ref, btrfs_tree_block_info,
// btrfs_extent_data_ref, btrfs_shared_data_ref).
#pragma once
#include <vector>

#include "lib/format/decode.h"

namespace fsctl::format {

/// The order key of an inline ref inside its extent item: refs are sorted by
/// type ascending, then by this value DESCENDING (kernel
/// lookup_inline_extent_backref stops at the first ref of the same type with
/// a smaller value; the tree checker rejects "inline ref out-of-order" when a
/// ref's value exceeds the previous one of its type): the root for
/// TREE_BLOCK_REF and EXTENT_OWNER_REF, the parent bytenr for SHARED_*, and
/// hash_extent_data_ref(root, objectid, offset) for EXTENT_DATA_REF.
[[nodiscard]] u64 inline_ref_seq(const ExtentRef& ref);

/// Sorts inline refs into the on-disk order: type ascending, inline_ref_seq
/// descending (stable for equal keys).
void sort_inline_refs(std::vector<ExtentRef>& refs);

/// Bytes of an extent item: btrfs_extent_item (refs, generation, flags),
/// btrfs_tree_block_info when `rec.has_tree_block_info`, then each inline ref
/// (type byte + its body) in the given order.
[[nodiscard]] std::vector<u8> encode_extent_item(const ExtentRecord& rec);

}  // namespace fsctl::format
