// SPDX-License-Identifier: GPL-2.0-only
// Finding a block group's BLOCK_GROUP_ITEM: the one rule for which tree holds
// it (kernel btrfs_block_group_root(): the block group tree when the
// filesystem has one, else the extent tree; during a conversion either, as
// btrfs-progs read_converting_block_groups reads both). Used by the open
// sequence (lib/fs), relocation and the transaction engine alike. Here in
// lib/ctree, the lowest layer that can search trees (DESIGN.md "Change from
// the design card").
#pragma once
#include <optional>
#include <vector>

#include "lib/ctree/block_source.h"
#include "lib/format/block_group_item.h"

namespace fsctl::ctree {

/// The trees a filesystem (or a transaction's view of it) may keep its
/// BLOCK_GROUP_ITEMs in.
struct BlockGroupTrees {
  std::optional<RootRef> block_group_tree;  // tree 11, when it exists (also during a conversion, either way)
  std::optional<RootRef> extent_tree;       // tree 2
  bool changing = false;                    // super flag CHANGING_BG_TREE: a conversion is under way
};

/// A BLOCK_GROUP_ITEM found, and where.
struct FoundBlockGroupItem {
  u64 tree = 0;  // BLOCK_GROUP_TREE_OBJECTID or EXTENT_TREE_OBJECTID
  format::BlockGroupRecord item;
};

/// The trees find_block_group_item searches for every item, in order: the
/// block group tree when it exists, and the extent tree when there is no
/// block group tree or a conversion is under way (otherwise the extent tree
/// is searched only for an item the block group tree lacks). For read-ahead
/// of many lookups.
[[nodiscard]] std::vector<RootRef> block_group_item_trees(const BlockGroupTrees& trees);

/// Finds the item (start, BLOCK_GROUP_ITEM, length) (logical bytes) by the
/// rule of this file: in the block group tree when it exists; in the extent
/// tree when there is no block group tree, when the block group tree lacks
/// it, or (CHANGING_BG_TREE) always, where an item in both trees is
/// corruption. Returns std::nullopt when neither tree has it. Errors: read
/// errors ("reading block group tree: ..." / "reading extent tree: ...");
/// Errc::corrupt for an item in both trees during a conversion or an item
/// decode_block_group_item rejects (naming the key and tree).
[[nodiscard]] Result<std::optional<FoundBlockGroupItem>> find_block_group_item(BlockSource& src, const BlockGroupTrees& trees,
                                                                              u64 start, u64 length);

}  // namespace fsctl::ctree
