// SPDX-License-Identifier: GPL-2.0-only
// The write jobs as the crash tests run them, through their public entry
// points (convert/bg_tree.h, lib/relocation/balance.h, lib/qgroup/repair.h,
// lib/qgroup/quota_disable.h, quota_enable.h, lib/rescue/balance_cancel.h).
// The one place to edit when an entry point's signature changes (a batch
// runner is being introduced).
#pragma once
#include <functional>
#include <string>

#include "lib/base/stop_request.h"
#include "lib/fs/fs_info.h"

namespace fsctl::testing {

/// A job run to completion on an opened filesystem. Errors: the job's.
using Job = std::function<Status(fs::FsInfo&)>;

/// A job that polls `stop` (a signal handler's StopRequest; null: never
/// asked): true when it stopped early. Errors: the job's.
using StoppableJob = std::function<Result<bool>(fs::FsInfo&, const StopRequest*)>;

/// `fsctl convert --bg-tree --batch B` (to_bg_tree) or `--no-bg-tree`.
[[nodiscard]] StoppableJob convert_stoppable(bool to_bg_tree, u64 batch);
[[nodiscard]] Job convert_job(bool to_bg_tree, u64 batch);

/// `fsctl balance -mFILTERS --batch B [-f]`: metadata and, as btrfs balance
/// does with -m alone, system block groups with the same filters.
/// REQUIRES: `filters` parses (an empty string: every group).
[[nodiscard]] StoppableJob balance_stoppable(const std::string& filters, u64 batch, bool force);
[[nodiscard]] Job balance_job(const std::string& filters, u64 batch, bool force);

/// `fsctl qgroup verify --repair`: verify, then repair what differs.
/// Errors: Errc::not_found when quota is off.
[[nodiscard]] StoppableJob repair_stoppable();
[[nodiscard]] Job repair_job();

/// `fsctl quota disable`.
[[nodiscard]] Job quota_disable_job();
/// `fsctl quota enable`.
[[nodiscard]] Job quota_enable_job();
/// `fsctl balance cancel`.
[[nodiscard]] Job balance_cancel_job();

}  // namespace fsctl::testing
