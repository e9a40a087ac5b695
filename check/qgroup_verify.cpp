// SPDX-License-Identifier: GPL-2.0-only
// Compares computed qgroup numbers with the quota tree's items. Only
// referenced and exclusive decide a mismatch; the compressed twins are
// reported (btrfs-progs compares the same two numbers).
#include "check/qgroup_verify.h"

namespace fsctl::check {

Result<std::optional<QgroupVerifyReport>> verify_qgroups(fs::FsInfo& fs, ProgressObserver* progress) {
  FSCTL_TRY_ASSIGN(auto quota, qgroup::read_quota(fs));
  if (!quota) return std::optional<QgroupVerifyReport>{};
  QgroupVerifyReport rep;
  FSCTL_TRY_ASSIGN(rep.computed, qgroup::compute_qgroups(fs, *quota, 0, progress));
  rep.quota = std::move(*quota);
  std::set<u64> subvols, dropping;
  for (auto& s : rep.computed.subvols) {
    subvols.insert(s.root_id);
    if (s.dropping) dropping.insert(s.root_id);
  }
  for (auto& [id, c] : rep.computed.counts) {
    QgroupVerifyRow row;
    row.qgroupid = id;
    row.computed = c;
    row.subvol_exists = qgroup::qgroup_level(id) == 0 && subvols.count(id);
    row.subvol_dropping = qgroup::qgroup_level(id) == 0 && dropping.count(id);
    auto it = rep.quota.qgroups.find(id);
    if (it != rep.quota.qgroups.end() && it->second.has_info) row.ondisk = it->second.ondisk;
    if (!row.ondisk) {
      row.status = "missing";
    } else if (row.ondisk->rfer != c.rfer || row.ondisk->excl != c.excl) {
      row.status = "differs";
    } else if (qgroup::qgroup_level(id) == 0 && !row.subvol_exists) {
      // Simple quotas keep the qgroup of a deleted subvolume while extents it
      // owns are still in use (btrfs-progs: "<squota space holder>").
      row.status = rep.quota.simple_quota && (c.rfer || c.excl) ? "space_holder" : "stale";
    } else {
      row.status = "ok";
    }
    if (row.status == "differs" || row.status == "missing") rep.mismatches++;
    rep.rows.push_back(row);
  }
  if (rep.quota.rescan_running()) {
    rep.differences_expected = true;
    rep.expected_reason = "a qgroup rescan is in progress (rescan progress " + std::to_string(rep.quota.rescan) +
                          "): on-disk numbers are not final";
  } else if (rep.quota.inconsistent()) {
    rep.differences_expected = true;
    rep.expected_reason = "quota is marked inconsistent: on-disk numbers are not maintained until a rescan";
  }
  return std::optional<QgroupVerifyReport>(std::move(rep));
}

}  // namespace fsctl::check
