// SPDX-License-Identifier: GPL-2.0-only
// FreeSpaceUpdates: the free space tree changes of a transaction's block
// allocations and frees, queued per block and applied by the commit's fixed
// point (kernel free-space-tree.c add_to_free_space_tree /
// remove_from_free_space_tree, update_free_space_extent_count). One part of
// the Transaction (transaction.h).
#pragma once
#include <map>
#include <set>

#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::transaction {

class Transaction;

class FreeSpaceUpdates {
 public:
  /// A block was allocated: its range becomes used at commit. A block of
  /// this transaction freed after the tree recorded it as used left a queued
  /// "free": reusing it cancels that, and the tree's "used" stands.
  void allocated(u64 bytenr) {
    auto it = pending_.find(bytenr);
    if (it != pending_.end() && it->second) {
      // The free space tree still says "used" (its "free" is cancelled):
      // remember that, so freeing the block again queues the "free" anew
      // instead of forgetting it (test 094).
      pending_.erase(it);
      applied_.insert(bytenr);
    } else {
      pending_[bytenr] = false;
    }
  }
  /// A committed block was freed: its range becomes free at commit.
  void freed_committed(u64 bytenr) { pending_[bytenr] = true; }
  /// A block of this transaction was freed again: if the tree already marks
  /// it used (an earlier commit round), queue the "free"; else forget it.
  void freed_new(u64 bytenr) {
    if (applied_.erase(bytenr))
      pending_[bytenr] = true;
    else
      pending_.erase(bytenr);
  }
  /// A committed data extent of `len` bytes at `bytenr` was freed (its last
  /// reference dropped): its range becomes free at commit. Data space is
  /// never allocated by this engine, so no later change cancels it.
  void freed_data(u64 bytenr, u64 len) { data_freed_[bytenr] = len; }
  [[nodiscard]] bool empty() const { return pending_.empty() && data_freed_.empty(); }

  /// Applies the queued changes to the free space tree of `t`: runs of
  /// adjacent blocks going the same way in one block group become one range
  /// update, in extent form (FREE_SPACE_EXTENT items merged or split) or
  /// bitmap form (bits flipped), FREE_SPACE_INFO.extent_count kept right;
  /// then every group whose count changed converts between the forms at the
  /// kernel's thresholds, at most once per transaction. The tree changes
  /// allocate and free blocks themselves, whose updates are applied in the
  /// same call. Errors: Errc::corrupt when the tree contradicts a change
  /// (a range not free, a bit already set, a count that does not match);
  /// tree errors.
  [[nodiscard]] Status apply(Transaction& t);

 private:
  std::map<u64, bool> pending_;  // bytenr -> true: now free, false: now used
  std::set<u64> applied_;        // own blocks already marked used in the tree
  std::map<u64, u64> data_freed_;  // data extents freed: bytenr -> length
  std::set<u64> converted_;      // block groups whose form this transaction converted
};

}  // namespace fsctl::transaction
