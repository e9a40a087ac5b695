// SPDX-License-Identifier: GPL-2.0-only
// Editing the references of an extent, tree block or data, whatever form
// they have: an inline ref in the extent item or a keyed backref item after
// it (kernel extent-tree.c). Adding one (__btrfs_inc_extent_ref,
// insert_inline_extent_backref / insert_extent_backref): a data ref's count
// goes up when the ref exists; a new ref is inline while the item stays
// within the kernel's BTRFS_MAX_EXTENT_ITEM_SIZE, else keyed. Dropping one
// (__btrfs_free_extent, remove_extent_backref): a data ref's count goes down
// by one, the ref goes at 0; the extent item's refs go down by one, and the
// item goes with its last reference, its space freed
// (Transaction::release_block_space, free_data_extent). Setting FULL_BACKREF
// (btrfs_set_disk_extent_flags). Used by the tree drop (tree_drop.h), for
// blocks that may be shared by many roots.
#pragma once
#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/extent_item.h"

namespace fsctl::transaction {

class Transaction;

/// The extent a reference points at: a tree block (`level`; its extent
/// item in either form, tree_block_extent.h) or a data extent of
/// `num_bytes` (key (bytenr, EXTENT_ITEM, num_bytes)).
struct ExtentTarget {
  u64 bytenr = 0;
  bool tree_block = true;
  u8 level = 0;        // tree blocks
  u64 num_bytes = 0;   // data extents
};

/// refs and flags of a tree block's extent item (kernel
/// btrfs_lookup_extent_info). Errors: Errc::corrupt "tree block B (level L)
/// has no extent item" or an item that does not decode; read errors.
struct ExtentInfo {
  u64 refs = 0;
  u64 flags = 0;  // EXTENT_FLAG_*, BLOCK_FLAG_FULL_BACKREF
};
[[nodiscard]] Result<ExtentInfo> tree_block_info(Transaction& t, u64 bytenr, u8 level);

/// Whether the extent holds reference `ref` (TREE_BLOCK_REF of a root,
/// SHARED_BLOCK_REF of a parent, EXTENT_DATA_REF of (root, objectid,
/// offset), SHARED_DATA_REF of a parent), inline or keyed. Errors: read
/// errors; Errc::corrupt for an item that does not decode.
[[nodiscard]] Result<bool> extent_ref_exists(Transaction& t, const ExtentTarget& e, const format::ExtentRef& ref);

/// Adds one reference `ref` (a data ref: one count of it) to extent `e`:
/// refs + 1. Errors: Errc::corrupt naming the bytenr when the extent item is
/// missing; tree errors.
[[nodiscard]] Status add_extent_ref(Transaction& t, const ExtentTarget& e, const format::ExtentRef& ref);

/// Adds `flags` (BLOCK_FLAG_FULL_BACKREF) to the flags of tree block `e`'s
/// extent item. Errors: as add_extent_ref.
[[nodiscard]] Status set_extent_flags(Transaction& t, const ExtentTarget& e, u64 flags);

/// Bytes an extent item may reach by inline refs (kernel
/// BTRFS_MAX_EXTENT_ITEM_SIZE: a sixteenth of a leaf's data area minus an
/// item header): 224 with 4 KiB nodes, 992 with 16 KiB.
[[nodiscard]] u32 max_extent_item_size(u32 nodesize);

/// What drop_extent_ref did.
struct RefDropped {
  u64 refs_left = 0;  // the extent item's refs after the drop
  bool freed = false; // it was the last: the item is gone, the space freed at commit
};

/// Drops one reference `ref` (its type and root/parent/objectid/offset say
/// which; a data ref's count is one of it) of extent `e` in the extent tree
/// of `t`, and frees the extent with its last reference (tree block:
/// Transaction::release_block_space; data: free_data_extent, checksums
/// included). Errors: Errc::corrupt naming the bytenr when the extent item
/// or the reference is missing, or its refs are 0; tree errors.
[[nodiscard]] Result<RefDropped> drop_extent_ref(Transaction& t, const ExtentTarget& e, const format::ExtentRef& ref);

}  // namespace fsctl::transaction
