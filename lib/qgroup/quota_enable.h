// SPDX-License-Identifier: GPL-2.0-only
// Enabling quota offline (kernel qgroup.c btrfs_quota_enable, full
// accounting; btrfstune's enable_quota): a new quota tree with its status
// item and one empty level-0 qgroup per subvolume, marked INCONSISTENT and
// RESCAN so that numbers come from a rescan: `fsctl qgroup verify --repair`
// offline, or the kernel's own rescan, which it resumes at mount.
#pragma once
#include "lib/base/stop_request.h"
#include "lib/fs/fs_info.h"
#include "lib/transaction/batch_runner.h"

namespace fsctl::qgroup {

struct QuotaEnableOptions {
  bool dry_run = false;               // rehearse on an in-memory copy, commit nothing
  const StopRequest* stop = nullptr;  // signal handlers: abandon before the commit
};

struct QuotaEnableResult {
  bool already_enabled = false;  // a quota tree existed: nothing done
  u64 qgroups_created = 0;       // level-0 qgroups (INFO + LIMIT items) for the subvolumes
  transaction::OneCommit run;  // the commit (wrote, transid, ...; interrupted: nothing written)
};

/// Creates the quota tree (objectid 8, ROOT_ITEM (8, ROOT_ITEM, 0)) in one
/// transaction: QGROUP_STATUS (version 1, generation = transid, flags ON |
/// INCONSISTENT | RESCAN, rescan 0: 32-byte form) and, for the top-level
/// subvolume and every subvolume with refs > 0, QGROUP_INFO (all numbers 0)
/// and QGROUP_LIMIT (no limit), as the kernel's quota enable creates them.
/// Rehearsed whole on an in-memory copy first. Nothing to do
/// (already_enabled) when a quota tree exists.
/// REQUIRES: `fs` opened for writing with block groups (a dry run too).
/// Errors, nothing written: those of the write gate and
/// Transaction::start (Errc::unsupported), Errc::nospc; read errors.
[[nodiscard]] Result<QuotaEnableResult> enable_quota(fs::FsInfo& fs, const QuotaEnableOptions& opts);

}  // namespace fsctl::qgroup
