// SPDX-License-Identifier: GPL-2.0-only
// Cancelling a paused or interrupted kernel balance offline (kernel
// volumes.c btrfs_cancel_balance -> reset_balance_state -> del_balance_item;
// btrfs-progs `btrfs balance cancel`, which needs a mount): the BALANCE_ITEM
// (BALANCE_OBJECTID, TEMPORARY_ITEM, 0) leaves the root tree in one
// transaction, so that the next mount has no balance to resume. Relocation
// trees left by an interrupted relocation are refused, named: dropping them
// needs the tree drop of issue 15 (DESIGN.md invariant 6).
#pragma once
#include <vector>

#include "lib/base/stop_request.h"
#include "lib/fs/fs_info.h"
#include "lib/transaction/batch_runner.h"

namespace fsctl::relocation {

struct BalanceCancelOptions {
  bool dry_run = false;               // rehearse on an in-memory copy, commit nothing
  const StopRequest* stop = nullptr;  // signal handlers: abandon before the commit
};

struct BalanceCancelResult {
  bool balance_found = false;  // a BALANCE_ITEM existed (false: nothing to do)
  u64 balance_flags = 0;       // its btrfs_balance_item.flags
  transaction::OneCommit run;  // the commit (wrote, transid, ...; interrupted: nothing written)
};

/// Deletes the BALANCE_ITEM from the root tree in one transaction of the
/// batch runner (rehearsed whole in memory first). Nothing to do
/// (balance_found false, nothing written) without one. The kernel marks the
/// groups of a running balance read-only in memory only, so nothing else on
/// disk needs clearing.
/// REQUIRES: `fs` opened for writing with block groups (a dry run too).
/// Errors, nothing written: Errc::unsupported when relocation trees remain
/// (ROOT_ITEMs of TREE_RELOC, naming their subvolumes) or the data
/// relocation tree holds more than its root directory (naming the first
/// key); Errc::corrupt for a BALANCE_ITEM of the wrong size; Errc::nospc;
/// read errors naming the bytenr.
[[nodiscard]] Result<BalanceCancelResult> cancel_balance(fs::FsInfo& fs, const BalanceCancelOptions& opts);

}  // namespace fsctl::relocation
