// SPDX-License-Identifier: GPL-2.0-only
// Keyed extent backref codec: the items that follow an extent item in the
// extent tree when its inline refs do not hold them all (kernel btrfs_tree.h):
// (bytenr, TREE_BLOCK_REF, root) and (bytenr, SHARED_BLOCK_REF, parent) with
// no body, (bytenr, EXTENT_DATA_REF, hash) with a btrfs_extent_data_ref,
// (bytenr, SHARED_DATA_REF, parent) with a btrfs_shared_data_ref (count).
// Sizes as tree-checker.c check_simple_keyed_refs / check_extent_data_ref.
#pragma once
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/extent_item.h"

namespace fsctl::format {

/// Whether `type` is the key type of a keyed backref.
[[nodiscard]] bool is_keyed_backref(u8 type);

/// Decodes the keyed backref `key` (its type one of the four above) with its
/// item `data` into an ExtentRef (type, root or parent, objectid, offset,
/// count; count 1 for the block refs). Errors: Errc::corrupt when the size is
/// not the type's (TREE_BLOCK_REF and SHARED_BLOCK_REF 0 bytes, SHARED_DATA_REF
/// 4, EXTENT_DATA_REF 28: the one btrfs_extent_data_ref the kernel writes per
/// item) or `key` is no keyed backref.
[[nodiscard]] Result<ExtentRef> decode_keyed_backref(const Key& key, std::span<const u8> data);

/// A keyed backref item: its key and body.
struct KeyedBackrefItem {
  Key key;
  std::vector<u8> data;
};

/// The item of `ref` for the extent at `bytenr`: the key offset is the root
/// (TREE_BLOCK_REF), the parent (SHARED_*) or hash_extent_data_ref(root,
/// objectid, offset) (EXTENT_DATA_REF). REQUIRES: is_keyed_backref(ref.type).
[[nodiscard]] KeyedBackrefItem encode_keyed_backref(u64 bytenr, const ExtentRef& ref);

}  // namespace fsctl::format
