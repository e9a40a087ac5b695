// SPDX-License-Identifier: GPL-2.0-only
// Read-side B-tree navigation (kernel ctree.c): search_slot, next/prev leaf
// and item, and for_each_item over a key range.
#pragma once
#include <functional>
#include <optional>
#include <span>

#include "lib/ctree/block_source.h"
#include "lib/ctree/path.h"

namespace fsctl::ctree {

/// Reads the blocks on the search paths of `keys` (ascending) into the block
/// cache, level by level, each level as one batched read_tree_blocks request
/// (coalesced, read ahead in physical order), so that the searches for those
/// keys which follow find every block in the cache instead of reading one
/// block at a time (kernel READA for block group items). An optimization
/// only: when a block cannot be read or verified the prefetch stops and the
/// searches that follow report the problem as they would have anyway.
/// Effect: at most one block per key and level enters the cache.
void prefetch_search_paths(BlockSource& src, const RootRef& root, std::span<const format::Key> keys);

/// Binary search in a node or leaf: the first slot whose key is >= `key`
/// (may equal nritems); `exact` says whether that slot holds `key`.
[[nodiscard]] u32 bin_search(const format::NodeView& v, const format::Key& key, bool& exact);

/// What the pointer at `slot` of node `v` says its child must be: the
/// pointer's generation, the level below and the pointer key as first key.
[[nodiscard]] ParentCheck child_check(const format::NodeView& v, u32 slot);

/// Descends from `root` to the leaf where `key` is or would be inserted.
/// Returns true when the key exists (path.slots[0] is its slot), false when it
/// does not: then path.slots[0] is the insertion slot, which may equal the
/// leaf's nritems (past the end; call next_item/normalize to move on).
/// Effect: `path` holds the root-to-leaf blocks. Errors: those of
/// BlockSource::read_tree_block (Errc::csum, corrupt, io, not_found).
[[nodiscard]] Result<bool> search_slot(BlockSource& src, const RootRef& root, const format::Key& key, Path& path);

/// Moves `path` to slot 0 of the next leaf. Returns false (path unchanged)
/// when the current leaf is the last one. Errors: as search_slot.
[[nodiscard]] Result<bool> next_leaf(BlockSource& src, Path& path);
/// Moves to the previous leaf's last slot. Returns false when there is none.
[[nodiscard]] Result<bool> prev_leaf(BlockSource& src, Path& path);
/// Advances to the next item (crossing leaves); false at the end of the tree.
[[nodiscard]] Result<bool> next_item(BlockSource& src, Path& path);
/// Steps back to the previous item (crossing leaves); false at the start.
[[nodiscard]] Result<bool> prev_item(BlockSource& src, Path& path);
/// If slots[0] is past the end of its leaf, moves to the next leaf's first
/// item. Returns false when no item is left.
[[nodiscard]] Result<bool> normalize(BlockSource& src, Path& path);

/// Exact lookup: the item data bytes (copied) or std::nullopt when absent.
[[nodiscard]] Result<std::optional<std::vector<u8>>> lookup_item(BlockSource& src, const RootRef& root,
                                                                 const format::Key& key);

/// Leaves for_each_item reads ahead at a time (at most 2 MiB of 16 KiB
/// leaves): enough to keep the device busy, little enough for any cache.
inline constexpr u32 FOR_EACH_READ_AHEAD = 128;

/// Inclusive key range [min, max] in key order.
struct KeyRange {
  format::Key min = format::KEY_MIN;
  format::Key max = format::KEY_MAX;
};
enum class Visit { next, stop };
/// Calls `visit(leaf, slot)` for every item whose key lies in `range`, in key
/// order. Stops when the visitor says Visit::stop or returns an error. The
/// leaves of the range are read ahead in batches (the next FOR_EACH_READ_AHEAD
/// siblings under the same parent, in one batched read into the cache), not
/// one synchronous read per leaf.
[[nodiscard]] Status for_each_item(BlockSource& src, const RootRef& root, const KeyRange& range,
                                   const std::function<Result<Visit>(const format::NodeView&, u32)>& visit);

}  // namespace fsctl::ctree
