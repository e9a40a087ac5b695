// SPDX-License-Identifier: GPL-2.0-only
// Cancelling a paused or interrupted kernel balance offline (kernel
// volumes.c btrfs_cancel_balance -> reset_balance_state -> del_balance_item;
// btrfs-progs `btrfs balance cancel`, which needs a mount): the BALANCE_ITEM
// (BALANCE_OBJECTID, TEMPORARY_ITEM, 0) leaves the root tree in one
// transaction, so that the next mount has no balance to resume. Relocation
// trees left by an interrupted relocation are refused, named: dropping them
// needs the tree drop of issue 15 (DESIGN.md invariant 6).
#pragma once
#include <optional>
#include <vector>

#include "lib/base/stop_request.h"
#include "lib/fs/fs_info.h"
#include "lib/qgroup/repair.h"
#include "lib/rescue/drop_job.h"
#include "lib/transaction/batch_runner.h"
#include "lib/transaction/tree_drop.h"

namespace fsctl::rescue {

/// dry_run: rehearse on an in-memory copy, commit nothing; stop: abandon
/// before the commit (or stop between commits); batch: relocation trees'
/// tree blocks dropped per commit.
struct BalanceCancelOptions : RunControl {};

struct BalanceCancelResult {
  bool balance_found = false;  // a BALANCE_ITEM existed (false: nothing to do)
  u64 balance_flags = 0;       // its btrfs_balance_item.flags
  transaction::OneCommit run;  // the commits (wrote, last transid, sums; interrupted: see below)
  std::vector<u64> relocation_trees;  // subvolumes whose relocation tree was found (TREE_RELOC key offsets)
  std::size_t relocation_trees_dropped = 0;
  /// Items of the relocation inodes in the data relocation tree deleted
  /// with the first commit (INODE_ITEM and ORPHAN_ITEM keys; kernel
  /// create_reloc_inode, removed by the next mount's orphan cleanup).
  std::vector<format::Key> relocation_inode_items;
  transaction::DropStats drop;        // what dropping them freed
  u64 commits = 0;
  std::optional<qgroup::RepairResult> qgroups;  // the rescan after the drop (quota on)
};

/// Deletes the BALANCE_ITEM from the root tree in one transaction of the
/// batch runner (rehearsed whole in memory first), or, with relocation
/// trees, drops them (the BALANCE_ITEM going with the first commit) and
/// recomputes the qgroups. Nothing to do (balance_found false, no
/// relocation tree, nothing written) without either. The kernel marks the
/// groups of a running balance read-only in memory only, so nothing else on
/// disk needs clearing.
/// REQUIRES: `fs` opened for writing with block groups (a dry run too).
/// Errors, nothing written: Errc::unsupported when the data relocation
/// tree holds more than its root directory and relocation inodes (naming
/// the first such key); Errc::corrupt for a BALANCE_ITEM of the wrong size; Errc::nospc;
/// read errors naming the bytenr.
[[nodiscard]] Result<BalanceCancelResult> cancel_balance(fs::FsInfo& fs, const BalanceCancelOptions& opts);

}  // namespace fsctl::rescue
