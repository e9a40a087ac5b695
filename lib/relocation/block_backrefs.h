// SPDX-License-Identifier: GPL-2.0-only
// Backrefs of relocated tree blocks (relocate.h). Kernel extent-tree.c /
// ctree.c (update_ref_for_cow, btrfs_inc_ref with full_backref): a block
// whose extent item has BLOCK_FLAG_FULL_BACKREF is referenced by its children
// (and, for a leaf, by its data extents) through SHARED_BLOCK_REF /
// SHARED_DATA_REF keyed by its own bytenr; otherwise they reference their
// root (TREE_BLOCK_REF / EXTENT_DATA_REF), which relocation does not change.
#pragma once
#include <algorithm>
#include <span>
#include <utility>

#include "lib/format/extent_item.h"
#include "lib/transaction/transaction.h"

namespace fsctl::relocation {

/// The inline backrefs of a tree block's extent item, each one of its refs
/// (TREE_BLOCK_REF, SHARED_BLOCK_REF; not the simple-quota owner ref).
[[nodiscard]] inline u64 inline_block_backrefs(const format::ExtentRecord& rec) {
  return static_cast<u64>(std::count_if(rec.inline_refs.begin(), rec.inline_refs.end(), [](const format::ExtentRef& r) {
    return r.type == format::KeyType::TREE_BLOCK_REF || r.type == format::KeyType::SHARED_BLOCK_REF;
  }));
}

/// The full backrefs of type `type` (SHARED_BLOCK_REF or SHARED_DATA_REF)
/// of extent `key` that name an old parent of `parents` ((old parent bytenr,
/// new parent bytenr), sorted by old parent, each old parent once) name its
/// new parent: inline ones in one rewrite of
/// the extent item (the refs re-sorted once: same size), keyed ones deleted
/// and inserted with the new parent as key offset, same data. One call per
/// extent, whatever its number of relocated parents (a data extent shared by
/// the leaves of 1,600 snapshots was decoded, re-sorted and stored once per
/// parent: O(refs^2)). Errors: Errc::corrupt when the extent item or a
/// backref is missing; tree write errors.
[[nodiscard]] Status remap_full_backrefs_of(transaction::Transaction& t, ctree::WriteRoot& ext, const format::Key& key, u8 type,
                                            std::span<const std::pair<u64, u64>> parents);

}  // namespace fsctl::relocation
