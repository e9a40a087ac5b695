// SPDX-License-Identifier: GPL-2.0-only
// Finding the extent item of a tree block: the one rule for both forms
// (kernel extent-tree.c btrfs_lookup_extent_info / lookup_inline_extent_backref,
// which try the skinny key and fall back to the old one): skinny
// (bytenr, METADATA_ITEM, level), or the old (bytenr, EXTENT_ITEM, nodesize)
// whose body carries btrfs_tree_block_info. A filesystem made without
// skinny metadata and later given it (btrfstune -x) holds both forms.
// Used by the transaction engine, relocation and the checkers alike.
#pragma once
#include <optional>

#include "lib/ctree/path.h"
#include "lib/ctree/tree_writer.h"
#include "lib/format/extent_item.h"

namespace fsctl::ctree {

/// Whether extent tree item `key` with body `rec` is a tree block's extent
/// item: a METADATA_ITEM, or an EXTENT_ITEM with flag TREE_BLOCK whose
/// offset is `nodesize` (the old form). A data extent's EXTENT_ITEM is not.
[[nodiscard]] bool is_tree_block_extent(const format::Key& key, const format::ExtentRecord& rec, u32 nodesize);

/// Finds the extent item of tree block `bytenr` (logical) at `level` in the
/// extent tree `ext`: (bytenr, METADATA_ITEM, level) first, then
/// (bytenr, EXTENT_ITEM, nodesize). Returns the key found, with `path` at
/// its slot, or std::nullopt when the block has neither (`path` then holds
/// the last search). The level of an old-form item is not compared here
/// (its btrfs_tree_block_info says it; callers that care decode the item).
/// Errors: read errors of the extent tree.
[[nodiscard]] Result<std::optional<format::Key>> find_tree_block_extent(BlockSource& src, const RootRef& ext, u64 bytenr,
                                                                        u8 level, u32 nodesize, Path& path);

/// As find_tree_block_extent, but `path` comes from search_slot_for_write
/// (ins_len 0) for the key found, so the caller may change or delete the
/// item. A block without an extent item copies no block. Errors: read and
/// allocation errors.
[[nodiscard]] Result<std::optional<format::Key>> find_tree_block_extent_for_write(TreeWriter& w, WriteRoot& ext, u64 bytenr,
                                                                                  u8 level, Path& path);

/// The extent item of tree block `bytenr` at `level` decoded, with the key it
/// has, or std::nullopt when it has none. Errors: read errors;
/// Errc::corrupt when the item does not decode (naming the key).
struct TreeBlockExtent {
  format::Key key;
  format::ExtentRecord rec;
};
[[nodiscard]] Result<std::optional<TreeBlockExtent>> read_tree_block_extent(BlockSource& src, const RootRef& ext, u64 bytenr,
                                                                            u8 level, u32 nodesize);

}  // namespace fsctl::ctree
