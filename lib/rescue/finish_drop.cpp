// SPDX-License-Identifier: GPL-2.0-only
// Finishing the deletion of subvolumes (finish_drop.h): the dead roots
// dropped by run_drops, then the qgroup numbers recomputed and written.
#include "lib/rescue/finish_drop.h"

#include "lib/ctree/search.h"
#include "lib/qgroup/qgroup.h"
#include "lib/rescue/drop_job.h"

namespace fsctl::rescue {
using namespace fsctl::format;

namespace {

std::vector<DeadRoot> find_dead_roots(const fs::FsInfo& fs) {
  std::vector<DeadRoot> out;
  for (const auto& e : fs.root_entries()) {
    if (!is_fstree(e.key.objectid) || e.key.type != KeyType::ROOT_ITEM || e.item.refs != 0) continue;
    DeadRoot d;
    d.key = e.key;
    d.started = e.item.drop_progress.objectid != 0;
    d.drop_progress = e.item.drop_progress;
    d.drop_level = e.item.drop_level;
    d.level = e.item.level;
    out.push_back(d);
  }
  return out;
}

/// The qgroup rescan after the drop: the dropped subvolumes' qgroups go.
Status fix_qgroups(fs::FsInfo& fs, const FinishDropOptions& o, FinishDropResult& res) {
  std::set<u64> removable;
  for (const auto& d : res.roots)
    if (d.dropped) removable.insert(d.key.objectid);
  FSCTL_TRY_ASSIGN(QgroupFix fix, recompute_qgroups(fs, removable, o.stop, o.progress));
  res.qgroups = fix.repair;
  res.qgroups_removed = fix.removed;
  if (res.qgroups && res.qgroups->interrupted) res.interrupted = true;
  return {};
}

}  // namespace

Result<FinishDropResult> finish_drop(fs::FsInfo& fs, const FinishDropOptions& o) {
  FinishDropResult res;
  res.roots = find_dead_roots(fs);
  for (auto& d : res.roots) {
    FSCTL_TRY_ASSIGN(auto orphan, ctree::lookup_item(fs, fs.tree_root(), Key{ORPHAN_OBJECTID, KeyType::ORPHAN_ITEM, d.key.objectid}));
    d.orphan_item = orphan.has_value();
  }
  FSCTL_TRY_ASSIGN(auto quota, qgroup::read_quota(fs));
  res.quota = quota.has_value();
  // A crash between the last drop and the qgroup write leaves no dead root
  // and the status INCONSISTENT: the rerun recomputes.
  if (res.roots.empty()) {
    if (!o.dry_run && quota && quota->inconsistent()) FSCTL_TRY(fix_qgroups(fs, o, res));
    return res;
  }
  DropRunOptions d;
  for (const auto& r : res.roots) d.roots.push_back(r.key);
  d.mark_quota_inconsistent = quota.has_value() && !quota->inconsistent();
  static_cast<RunControl&>(d) = o;
  FSCTL_TRY_ASSIGN(DropRun run, run_drops(fs, d));
  res.stats = run.stats;
  res.run = run.run;
  for (std::size_t i = 0; i < run.dropped && i < res.roots.size(); ++i) res.roots[i].dropped = true;
  res.interrupted = res.run.interrupted;
  if (!run.done || !quota) return res;
  FSCTL_TRY(fix_qgroups(fs, o, res));
  return res;
}

}  // namespace fsctl::rescue
