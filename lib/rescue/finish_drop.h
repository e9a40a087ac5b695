// SPDX-License-Identifier: GPL-2.0-only
// Finishing the deletion of subvolumes offline (`fsctl rescue finish-drop`):
// the kernel's cleaner work (disk-io.c btrfs_find_orphan_roots,
// transaction.c btrfs_clean_one_deleted_snapshot -> btrfs_drop_snapshot)
// for every subvolume whose ROOT_ITEM has refs 0, deleted but not yet
// (or half) dropped, on the batch runner: each step drops about `batch`
// tree blocks (lib/transaction/tree_drop.h) and commits, recording where
// it stopped in the ROOT_ITEM as the kernel does, so a crash or an
// interruption resumes there (here or in the kernel's cleaner).
//
// Qgroups (full accounting): the first step marks the quota status
// INCONSISTENT (as the kernel does for a drop it does not trace), so that a
// state between steps is never trusted; after the last step the numbers
// are computed from the trees and written with the flag cleared (an offline
// rescan, lib/qgroup/repair.h), and the dropped subvolumes' level-0
// qgroups are deleted as the kernel deletes them (their numbers are 0).
// Simple quotas: the same, their numbers computed from the extent owners.
#pragma once
#include <optional>
#include <vector>

#include "lib/base/progress.h"
#include "lib/base/stop_request.h"
#include "lib/fs/fs_info.h"
#include "lib/qgroup/repair.h"
#include "lib/rescue/drop_job.h"
#include "lib/transaction/batch_runner.h"
#include "lib/transaction/tree_drop.h"

namespace fsctl::rescue {

struct FinishDropOptions : RunControl {};

/// A deleted subvolume as found before the run.
struct DeadRoot {
  format::Key key;              // its ROOT_ITEM key
  bool started = false;         // drop_progress set: partly dropped (by the kernel or an earlier run)
  format::Key drop_progress{};
  u8 drop_level = 0;
  u8 level = 0;                 // of its root node
  bool orphan_item = false;     // (ORPHAN, ORPHAN_ITEM, id) in the root tree
  bool dropped = false;         // the run finished it
};

struct FinishDropResult {
  std::vector<DeadRoot> roots;
  transaction::DropStats stats;
  transaction::RunStats run;
  bool quota = false;                        // quota enabled: the numbers are recomputed after the drop
  std::optional<qgroup::RepairResult> qgroups;  // the recomputation's write (after a complete real run)
  std::vector<u64> qgroups_removed;          // level-0 qgroups of the dropped subvolumes deleted
  bool interrupted = false;                  // stopped between commits: the rest resumes on a rerun
};

/// Drops every deleted subvolume of `fs` (ROOT_ITEM refs 0) to the end
/// (see above). Nothing to do without one (roots empty, nothing written).
/// REQUIRES: `fs` opened for writing with block groups (a dry run too).
/// Errors, nothing written when before the first commit: Errc::corrupt for
/// a tree whose blocks and extent items disagree (naming the bytenr), the
/// write gate's refusals, Errc::nospc; after a commit the message says how
/// far the drop got (rerun resumes).
[[nodiscard]] Result<FinishDropResult> finish_drop(fs::FsInfo& fs, const FinishDropOptions& opts);

}  // namespace fsctl::rescue
