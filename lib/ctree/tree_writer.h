// SPDX-License-Identifier: GPL-2.0-only
// TreeWriter: what the write side of lib/ctree needs from a transaction —
// a transid, fresh tree blocks, freeing blocks, and mutable access to blocks
// already copied in this transaction. lib/transaction implements it, so the
// B-tree code stays below it (docs/DESIGN.md "Layers"; invariant 1: COW only).
#pragma once
#include <array>
#include <memory>

#include "lib/cache/tree_block.h"
#include "lib/ctree/block_source.h"
#include "lib/format/node_layout.h"

namespace fsctl::ctree {

/// What the write functions did to one tree, per level (0 = leaves), for
/// tests and reports. A push moves items or key pointers into a sibling (or
/// sends an insertion there) and frees no block; a merge empties a block
/// into its siblings and frees it (kernel btrfs_del_items / balance_level).
struct WriteStats {
  std::array<u64, format::MAX_LEVEL> splits{};
  std::array<u64, format::MAX_LEVEL> pushes{};
  std::array<u64, format::MAX_LEVEL> merges{};
  u64 root_grows = 0;      // a new root above a split one
  u64 root_collapses = 0;  // a root node with one child replaced by the child
};

/// A tree being modified: its root, updated in place by the write functions
/// when the root is copied, split or collapsed, and the counters of what
/// they did to it.
struct WriteRoot {
  u64 root_id = 0;
  u64 bytenr = 0;
  u8 level = 0;
  u64 generation = 0;
  WriteStats stats{};
  [[nodiscard]] RootRef ref() const { return {root_id, bytenr, level, generation}; }
};

class TreeWriter : public BlockSource {
 public:
  /// The running transaction's id; blocks written by it carry it as generation.
  [[nodiscard]] virtual u64 transid() const = 0;
  /// A new zeroed tree block owned by `owner` at `level`, header filled
  /// (bytenr, fsid, chunk tree uuid, generation = transid, owner, level,
  /// flags WRITTEN | MIXED_BACKREF_REV), dirty in this transaction.
  /// Errors: Errc::nospc when no metadata space is left.
  [[nodiscard]] virtual Result<std::shared_ptr<cache::TreeBlock>> alloc_tree_block(u64 owner, u8 level) = 0;
  /// The block stops being referenced by `owner` in this transaction; its
  /// space returns after commit (or at once if it was allocated by this
  /// transaction). Errors: Errc::unsupported when the block is shared.
  [[nodiscard]] virtual Status free_tree_block(u64 bytenr, u64 owner, u8 level) = 0;
  /// The mutable copy of `bytenr` if this transaction allocated it and holds
  /// it in memory, else null.
  [[nodiscard]] virtual std::shared_ptr<cache::TreeBlock> dirty_block(u64 bytenr) = 0;
  /// The mutable block of `b` (a block as read through this writer) if this
  /// transaction allocated it, else null. Unlike dirty_block(bytenr) it also
  /// finds a block of this transaction that a writer wrote back before its
  /// commit and dropped from memory (bounded writeback): `b` is then that
  /// block as read back, and it becomes dirty again in place, at the same
  /// bytenr (kernel: re-dirtying an extent buffer of the running transaction).
  [[nodiscard]] virtual std::shared_ptr<cache::TreeBlock> dirty_block(const cache::TreeBlockRef& b) { return dirty_block(b->bytenr); }
};

}  // namespace fsctl::ctree
