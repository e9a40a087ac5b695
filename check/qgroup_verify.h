// SPDX-License-Identifier: GPL-2.0-only
// qgroup verification: on-disk QGROUP_INFO numbers against numbers computed
// from the trees (lib/qgroup). Returns a report; never prints.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "lib/qgroup/qgroup.h"

namespace fsctl::check {

/// One row of the verification table.
struct QgroupVerifyRow {
  u64 qgroupid = 0;
  std::optional<qgroup::QgroupCount> ondisk;  // absent: no QGROUP_INFO item
  qgroup::QgroupCount computed;
  bool subvol_exists = false;  // level 0: a subvolume tree with this id exists
  /// Level 0: that subvolume is being deleted (ROOT_ITEM refs 0, the
  /// kernel's cleaner has not finished dropping it): the numbers are right
  /// now and will change when the drop finishes (btrfs-progs shows the path
  /// "<under deletion>").
  bool subvol_dropping = false;
  /// "ok", "differs", "missing" (a subvolume without a qgroup), "stale" (a
  /// level-0 qgroup without a subvolume; its numbers are still compared),
  /// "space_holder" (simple quotas: such a qgroup whose numbers are right
  /// and not 0: extents its deleted subvolume owns are still in use)
  std::string status;
  [[nodiscard]] s64 diff_rfer() const { return static_cast<s64>(computed.rfer - (ondisk ? ondisk->rfer : 0)); }
  [[nodiscard]] s64 diff_excl() const { return static_cast<s64>(computed.excl - (ondisk ? ondisk->excl : 0)); }
};

struct QgroupVerifyReport {
  qgroup::QuotaState quota;
  qgroup::Computed computed;
  std::vector<QgroupVerifyRow> rows;
  u64 mismatches = 0;       // rows with status "differs" or "missing"
  /// The status item says on-disk numbers are not final (RESCAN or
  /// INCONSISTENT): differences are expected and not counted as corruption.
  bool differences_expected = false;
  std::string expected_reason;
  [[nodiscard]] bool ok() const { return mismatches == 0 || differences_expected; }
};

/// Reads the quota tree, computes every qgroup and compares. std::nullopt
/// when quota is not enabled (no quota tree). Errors: as read_quota and
/// compute_qgroups. `progress`: told the tree blocks walked (compute_qgroups).
[[nodiscard]] Result<std::optional<QgroupVerifyReport>> verify_qgroups(fs::FsInfo& fs, ProgressObserver* progress = nullptr);

}  // namespace fsctl::check
