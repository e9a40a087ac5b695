// SPDX-License-Identifier: GPL-2.0-only
// Reservations from changes planned key by key (DESIGN.md invariant 4): the
// blocks the planned changes allocate in their tree are counted by replaying
// them on a shadow of the tree (ctree::count_planned_blocks: the distinct
// blocks on the keys' paths, the siblings pushes and merges change, splits
// that pushes avoid), instead of the per-change worst case of the counts in
// a Reservation. Transaction::reserve adds the commit's trees.
#pragma once
#include <vector>

#include "lib/ctree/write_plan.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {

/// The planned changes of one tree, in the order the operation makes them.
struct PlannedTree {
  u64 tree = 0;
  std::vector<ctree::PlannedChange> changes;
};

/// Reserves what `r` describes plus `plans`, before anything is written:
/// each plan is replayed on a shadow of its tree as it stands in `t` (a tree
/// that does not exist yet starts as one empty leaf, as create_tree makes
/// it); the blocks counted enter as Reservation::extra_blocks of `r`, whose
/// trees gain the planned ones, and Transaction::reserve bounds the commit's
/// trees from that. `counted`, when given, receives each replay's count.
/// Returns the reserved bytes (Transaction::reserved_bytes).
/// Errors: Errc::nospc as Transaction::reserve (a replay stops once it
/// exceeds the filesystem's size); Errc::invalid_argument when a plan does not
/// apply to its tree (an insert of an existing key, a resize or erase of a
/// missing one); read errors.
[[nodiscard]] Result<u64> reserve_planned(Transaction& t, Reservation r, const std::vector<PlannedTree>& plans,
                                          std::vector<ctree::PlanCount>* counted = nullptr);

}  // namespace fsctl::transaction
