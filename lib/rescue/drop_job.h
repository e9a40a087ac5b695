// SPDX-License-Identifier: GPL-2.0-only
// Dropping trees to the end on the batch runner, shared by `rescue
// finish-drop` (deleted subvolumes) and `balance cancel` (relocation trees
// an interrupted kernel balance left): each step drops about `batch` tree
// blocks of the trees in turn (lib/transaction/tree_drop.h) and commits.
// With quota on, the first step marks the qgroup status INCONSISTENT (as
// the kernel does for a drop it does not trace: a state between steps is
// never trusted) and the run ends with an offline rescan
// (recompute_qgroups). The first step may also delete items (the
// BALANCE_ITEM, a relocation inode): there is always a first step.
#pragma once
#include <optional>
#include <set>
#include <vector>

#include "lib/base/progress.h"
#include "lib/base/stop_request.h"
#include "lib/fs/fs_info.h"
#include "lib/qgroup/repair.h"
#include "lib/transaction/batch_runner.h"
#include "lib/transaction/tree_drop.h"

namespace fsctl::rescue {

/// How a rescue job runs: what finish-drop, balance cancel and their
/// drops share.
struct RunControl {
  u64 batch = 8192;                      // tree blocks dropped per commit, at most
  bool dry_run = false;                  // rehearse the whole run on an in-memory copy; commit nothing
  const StopRequest* stop = nullptr;     // signal handlers: stop between commits (or abandon the step)
  ProgressObserver* progress = nullptr;
};

struct DropRunOptions : RunControl {
  std::vector<format::Key> roots;       // ROOT_ITEM keys of the trees to drop, in order
  bool mark_quota_inconsistent = false;  // in the first step
  /// Items deleted in the first step when they are there: (tree id, key)
  /// (the BALANCE_ITEM, a relocation inode's items).
  std::vector<std::pair<u64, format::Key>> delete_items;
};

struct DropRun {
  transaction::DropStats stats;  // a dry run: its rehearsal's
  transaction::RunStats run;     // commits: a dry run's are its rehearsal's
  std::size_t dropped = 0;       // of opts.roots, the first `dropped` are gone
  bool done = false;             // all of them (a real run, not interrupted)
};

/// Runs the drops (see above). Errors: those of transaction::run_batches
/// (before the first commit nothing is written; after, the message says
/// how far the run got) and of drop_tree_step.
[[nodiscard]] Result<DropRun> run_drops(fs::FsInfo& fs, const DropRunOptions& opts);

/// After a drop: the qgroup numbers computed from the trees and written
/// with the status made consistent (lib/qgroup/repair.h), deleting the
/// level-0 qgroups of `removable` subvolumes whose computed numbers are 0
/// (the kernel's btrfs_qgroup_cleanup_dropped_subvolume). Nothing without
/// quota. Returns the repair's result (nullopt without quota) and the
/// qgroups removed. Errors: those of compute_qgroups and repair_qgroups.
struct QgroupFix {
  std::optional<qgroup::RepairResult> repair;
  std::vector<u64> removed;
};
[[nodiscard]] Result<QgroupFix> recompute_qgroups(fs::FsInfo& fs, const std::set<u64>& removable, const StopRequest* stop,
                                                  ProgressObserver* progress);

}  // namespace fsctl::rescue
