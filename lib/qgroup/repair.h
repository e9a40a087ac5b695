// SPDX-License-Identifier: GPL-2.0-only
// Writing computed qgroup numbers back (an offline rescan; kernel
// qgroup_rescan_leaf + update_qgroup_info_item + update_qgroup_status_item).
#pragma once
#include "lib/base/stop_request.h"
#include <set>

#include "lib/qgroup/qgroup.h"

namespace fsctl::qgroup {

struct RepairResult {
  u64 qgroups_updated = 0;  // QGROUP_INFO items rewritten
  u64 qgroups_added = 0;    // level-0 qgroups created for subvolumes without one
  u64 qgroups_removed = 0;  // qgroups of dropped subvolumes deleted (RepairOptions::remove)
  bool status_fixed = false;
  bool wrote = false;       // false: everything was right, nothing written
  u64 transid = 0;
  u64 reserved_bytes = 0;
  u64 used_bytes = 0;
  u64 blocks_written = 0;
  bool interrupted = false;  // stopped by `stop` before its commit: nothing written
};

struct RepairOptions {
  const StopRequest* stop = nullptr;  // signal handlers: abandon before the commit
  /// Level-0 qgroups to delete with their LIMIT item and relations (kernel
  /// btrfs_remove_qgroup): those of subvolumes that no longer exist and whose
  /// computed numbers are 0, as the kernel removes a dropped subvolume's
  /// qgroup (qgroup.c btrfs_qgroup_cleanup_dropped_subvolume).
  std::set<u64> remove;
};

/// Rewrites every QGROUP_INFO whose numbers differ from `computed` (all four
/// numbers and the generation), adds INFO+LIMIT items for subvolumes without
/// a level-0 qgroup, clears INCONSISTENT and RESCAN in the status item and
/// sets its generation, in one transaction. Writes nothing when all is
/// right. `stop` (signal handlers) may abandon it before its commit. REQUIRES: `fs` opened for writing with block groups. Errors: those
/// of Transaction::start/reserve/commit (Errc::nospc before any write).
[[nodiscard]] Result<RepairResult> repair_qgroups(fs::FsInfo& fs, const QuotaState& quota, const Computed& computed,
                                                 const RepairOptions& opts = {});

}  // namespace fsctl::qgroup
