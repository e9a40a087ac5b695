// SPDX-License-Identifier: GPL-2.0-only
// Write side of the B-tree (kernel ctree.c): copy-on-write search, item
// insertion and deletion; pushes into siblings before leaf and node splits,
// merges of sparse leaves and nodes after deletions, removal of emptied
// blocks, root growth and collapse. Every block changed (on the path or a
// sibling) is copied once per transaction (DESIGN.md invariant 1); the tree
// stays valid for the tree checker after every call.
#pragma once
#include "lib/ctree/path.h"
#include "lib/ctree/tree_writer.h"

namespace fsctl::ctree {

/// Like search_slot, but every block on the path is copied into the
/// transaction first (or reused if already copied), so the caller may modify
/// the leaf. With `ins_len` > 0 (item size + item header) a node with fewer
/// than two free pointer slots pushes pointers into a sibling or is split on
/// the way, and a leaf that lacks room pushes items into its siblings or is
/// split, so an insertion of that size fits at path.slots[0] (the path may
/// end in a sibling); when `key` exists, `ins_len` is how much its item will
/// grow (resize_item), and the leaf is split so that it can (twice if needed:
/// the item may end alone in its leaf). Returns true when `key` exists.
/// Effect: `root` follows a new root block; `path` holds dirty blocks;
/// `root.stats` counts the pushes and splits.
/// Errors: read errors, Errc::nospc from allocation, Errc::unsupported for a
/// shared block, Errc::invalid_argument when the insertion or growth cannot
/// fit any leaf.
[[nodiscard]] Result<bool> search_slot_for_write(TreeWriter& w, WriteRoot& root, const format::Key& key,
                                                 u32 ins_len, Path& path);

/// Inserts an item of `size` zeroed bytes at `key`; `path` points at it.
/// Errors: Errc::invalid_argument when the key exists or the item cannot fit
/// a leaf; as search_slot_for_write otherwise.
[[nodiscard]] Status insert_empty_item(TreeWriter& w, WriteRoot& root, const format::Key& key, u32 size, Path& path);

/// Inserts `key` with `data`.
[[nodiscard]] Status insert_item(TreeWriter& w, WriteRoot& root, const format::Key& key, std::span<const u8> data);

/// Deletes the item at `path` (from search_slot_for_write). A changed first
/// key is propagated to the parents. A leaf left less than a third full is
/// emptied into its siblings as far as they take it; a leaf left empty is
/// removed from its parent and freed. Then every node on the path with at
/// most a quarter of its pointers is merged with its siblings (emptied nodes
/// are unlinked and freed), and a root node with one child is replaced by
/// it. Siblings changed are copied into the transaction. The path is
/// released afterwards; other paths and RootRefs taken before the call may
/// be stale (take the root afresh from `root`). Errors: read and allocation
/// errors (Errc::nospc, Errc::unsupported for a shared sibling).
[[nodiscard]] Status delete_item(TreeWriter& w, WriteRoot& root, Path& path);

/// Mutable bytes of the item at path.slots[0] of a path from
/// search_slot_for_write. REQUIRES: path.at_item().
[[nodiscard]] std::span<u8> item_data_mut(TreeWriter& w, const Path& path);

/// Resizes the item at `path` to `new_size` bytes at its end (splitting the
/// leaf first when growing needs room is the caller's job: search with
/// ins_len = growth). Errors: Errc::invalid_argument when it does not fit.
[[nodiscard]] Status resize_item(TreeWriter& w, Path& path, u32 new_size);

}  // namespace fsctl::ctree
