// SPDX-License-Identifier: GPL-2.0-only
// The key-aware part of a reservation (DESIGN.md invariant 4): how many tree
// blocks a planned sequence of item changes allocates in one tree, counted
// by replaying the changes through the write code (write.h) on a shadow of
// the tree — a TreeWriter that copies blocks into memory and never touches
// the real transaction. Copies of the blocks on the keys' paths, of the
// siblings that pushes and merges change, splits avoided by pushes, new
// roots: each counted where the write code really does it.
#pragma once
#include <optional>
#include <span>

#include "lib/ctree/tree_writer.h"

namespace fsctl::ctree {

/// One planned change of one item, in the order the operation will make it.
struct PlannedChange {
  enum class Kind : u8 {
    insert,  // insert_empty_item(key, size): the key must not exist
    resize,  // search_slot_for_write(key, growth) + resize_item(size): the key must exist
    update,  // search_slot_for_write(key, 0): copies the path (the key may be absent)
    erase,   // search_slot_for_write(key, 0) + delete_item: the key must exist
  };
  Kind kind = Kind::update;
  format::Key key;
  u32 size = 0;  // insert: item size; resize: new item size (bytes of item data)
};

/// What a replay counted.
struct PlanCount {
  u64 blocks = 0;        // tree block allocations (each allocation counts, even of a block freed again)
  bool capped = false;   // stopped after `limit` allocations; `blocks` is then only a lower bound
  WriteStats stats;      // what the write code did to the shadow tree
  u8 level = 0;          // the root level after the changes
};

/// Replays `changes` on a shadow of tree `root_id` and counts the blocks the
/// write code allocates for them in that tree, copying each block once per
/// transaction as the transaction `transid` does. `root` is the tree as the
/// transaction sees it now; std::nullopt means it does not exist yet and
/// starts as one empty leaf (one allocation, as Transaction::create_tree).
/// Blocks are read through `src` and never modified; a block `src` already
/// holds dirty is copied again in the shadow (so the count stays an upper
/// bound when the transaction already changed the tree). Stops after
/// `limit` allocations (PlanCount::capped). Memory: the shadow copies,
/// at most `limit` blocks.
/// Errors: read errors of `src`; Errc::invalid_argument when a change does
/// not apply (an insert of an existing key, a resize or erase of a missing
/// one, an item larger than a leaf).
[[nodiscard]] Result<PlanCount> count_planned_blocks(BlockSource& src, u64 root_id, const std::optional<RootRef>& root,
                                                     u64 transid, std::span<const PlannedChange> changes, u64 limit);

}  // namespace fsctl::ctree
