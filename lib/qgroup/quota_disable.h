// SPDX-License-Identifier: GPL-2.0-only
// Disabling quota offline (kernel qgroup.c btrfs_quota_disable; btrfs-progs
// `btrfs quota disable`, which needs a mount): the quota tree (objectid 8)
// is deleted whole with its ROOT_ITEM in one transaction of the batch
// runner. Its blocks are never shared; each must be the tree's alone.
#pragma once
#include "lib/base/stop_request.h"
#include "lib/fs/fs_info.h"
#include "lib/transaction/batch_runner.h"

namespace fsctl::qgroup {

struct QuotaDisableOptions {
  bool dry_run = false;              // rehearse on an in-memory copy, commit nothing
  const StopRequest* stop = nullptr;  // signal handlers: abandon before the commit
};

struct QuotaDisableResult {
  bool quota_was_enabled = false;  // a quota tree existed (false: nothing to do)
  u64 status_flags = 0;            // QGROUP_STATUS flags found (0 without a status item)
  bool simple_quota = false;       // simple quotas: the SIMPLE_QUOTA incompat bit stays (as the kernel leaves it)
  u64 qgroups = 0;                 // QGROUP_INFO items removed with the tree
  u64 relations = 0;               // QGROUP_RELATION pairs removed with the tree
  u64 quota_tree_blocks = 0;       // tree blocks of the quota tree freed
  transaction::OneCommit run;  // the commit (wrote, transid, ...; interrupted: nothing written)
};

/// Removes the quota tree and its ROOT_ITEM (root tree key (8, ROOT_ITEM,
/// 0)) in one transaction: every block freed (extent item dropped, free
/// space returned), so the kernel mounts with quota off. Nothing to do
/// (quota_was_enabled false, nothing written) without a quota tree.
/// Rehearsed whole on an in-memory copy first (batch_runner.h): a refusal
/// or ENOSPC is found before any write. With `dry_run` nothing is written.
/// REQUIRES: `fs` opened for writing with block groups (a dry run too).
/// Simple quotas (SIMPLE_QUOTA incompat bit) are disabled as the kernel
/// does it: the bit stays, as do the EXTENT_OWNER_REFs of data extents that
/// need it. Errors, nothing written: Errc::unsupported for a quota tree
/// block that is not the tree's alone (a wrong owner, more than one
/// reference) and the write gate's refusals; Errc::nospc; read errors
/// (Errc::io, Errc::csum, Errc::corrupt) naming the bytenr.
[[nodiscard]] Result<QuotaDisableResult> disable_quota(fs::FsInfo& fs, const QuotaDisableOptions& opts);

}  // namespace fsctl::qgroup
