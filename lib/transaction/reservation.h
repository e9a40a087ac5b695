// SPDX-License-Identifier: GPL-2.0-only
// Reservations from changes planned key by key (DESIGN.md invariant 4): the
// blocks the planned changes allocate in their tree are counted by replaying
// them on a shadow of the tree (ctree::count_planned_blocks: the distinct
// blocks on the keys' paths, the siblings pushes and merges change, splits
// that pushes avoid), instead of the per-change worst case of the counts in
// a Reservation. Transaction::reserve adds the commit's trees.
#pragma once
#include <functional>
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

/// Operations whose bound (reserve, reserve_planned) is at most this many
/// blocks are reserved by rehearsal (reserve_by_rehearsal): there the
/// commit's worst case (every metadata-range leaf of the extent tree, a
/// split per possible merge) is several times what they use.
inline constexpr u64 REHEARSAL_MAX_BLOCKS = 1024;

/// A rehearsal: a transaction on `fs` (started with
/// `allow_changing_bg_tree`, set_rehearsal) runs `changes` and its commit's
/// fixed point, writing nothing, and aborts. Returns the metadata bytes it
/// allocated (TransactionStats::used_bytes), what the same changes allocate
/// for real from the same committed state. Errors: those of `changes` and
/// the commit; Errc::nospc past half the cache budget.
[[nodiscard]] Result<u64> rehearse(fs::FsInfo& fs, bool allow_changing_bg_tree,
                                   const std::function<Status(Transaction&)>& changes);

/// Reservation by rehearsal (DESIGN.md invariant 4). `bound` is the result
/// of reserving the operation's bound on `t` (Transaction::reserve or
/// reserve_planned), before any change. It stands when it fits and is
/// larger than REHEARSAL_MAX_BLOCKS blocks. Otherwise (small, or not
/// fitting) a rehearsal transaction on t's filesystem (started with
/// `allow_changing_bg_tree`, set_rehearsal) runs `changes` and its commit's
/// fixed point, writing nothing, and `t` reserves what the rehearsal
/// allocated (Transaction::reserve_rehearsed; never more than a bound that
/// fitted) instead; when the rehearsal
/// cannot complete (past half the cache budget, or an error, which the real
/// run will meet and report itself) the bound's result stands. Returns the
/// reserved bytes. Errors: the bound's error, or Errc::nospc when even the
/// rehearsed amount does not fit.
/// `extra_blocks`: blocks reserved on top of the rehearsed amount (growth
/// the rehearsed changes do not include, e.g. later batches of a run).
[[nodiscard]] Result<u64> reserve_by_rehearsal(Transaction& t, Result<u64> bound, bool allow_changing_bg_tree,
                                               const std::function<Status(Transaction&)>& changes, u64 extra_blocks = 0);

}  // namespace fsctl::transaction
