// SPDX-License-Identifier: GPL-2.0-only
// Finishing the deletion of subvolumes (finish_drop.h): a multi-step job
// of the batch runner over lib/transaction/tree_drop, then the qgroup
// numbers recomputed and written.
#include "lib/rescue/finish_drop.h"

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/qgroup_items.h"
#include "lib/format/root_item.h"
#include "lib/qgroup/qgroup.h"
#include "lib/transaction/reservation.h"

namespace fsctl::rescue {
using namespace fsctl::format;
using transaction::Transaction;

namespace {

/// Sets INCONSISTENT in the quota status item (kernel
/// qgroup_mark_inconsistent).
Status mark_quota_inconsistent(Transaction& t) {
  FSCTL_TRY_ASSIGN(auto* qroot, t.root(QUOTA_TREE_OBJECTID));
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *qroot, Key{0, KeyType::QGROUP_STATUS, 0}, 0, p));
  if (!exact) return make_error(Errc::corrupt, "quota tree has no QGROUP_STATUS item");
  auto d = ctree::item_data_mut(t, p);
  FSCTL_TRY_ASSIGN(QgroupStatusRecord s, with_context(decode_qgroup_status(d), "QGROUP_STATUS"));
  s.flags |= QGROUP_STATUS_FLAG_INCONSISTENT;
  return store_qgroup_status(d, s);
}

/// The job: the dead roots in key order, each dropped step after step.
class FinishDropJob final : public transaction::BatchJob {
 public:
  /// `sink`, when set, is given each committed step's counters and commits
  /// (a dry run reports its rehearsal's).
  struct Sink {
    transaction::DropStats stats;
    u64 commits = 0;
    std::size_t dropped = 0;
  };
  FinishDropJob(std::vector<Key> keys, bool mark_quota, Sink* sink = nullptr)
      : keys_(std::move(keys)), mark_quota_(mark_quota), sink_(sink) {}

  bool done() const override { return next_ >= keys_.size(); }
  u64 next_units(u64 batch) const override { return batch; }
  // About one extent tree leaf edited per sixteen blocks dropped, plus the
  // paths of the csum, free space, root and quota trees: the default batch
  // (8192) is rehearsed.
  std::optional<u64> estimate_blocks(u64 batch) const override { return batch / 16 + 32; }
  Result<u64> reserve_bound(Transaction& t, u64 units) override {
    transaction::Reservation r;
    r.trees = {ROOT_TREE_OBJECTID, EXTENT_TREE_OBJECTID};
    for (u64 id : {CSUM_TREE_OBJECTID, FREE_SPACE_TREE_OBJECTID, QUOTA_TREE_OBJECTID})
      if (t.fs().find_root(id)) r.trees.push_back(id);
    r.trees_touched = r.trees.size();
    r.items_updated = units + 2;
    // A block's extent item, or a leaf's file extents' data refs (and
    // their checksums): a few items per block dropped.
    r.items_deleted = 4 * units + 2;
    r.items_inserted = units;  // csum items split around freed extents
    return t.reserve(r);
  }
  Status apply(Transaction& t, u64 units) override {
    pending_next_ = next_;
    pending_stats_ = {};
    pending_units_ = 0;
    if (mark_quota_ && !marked_) FSCTL_TRY(mark_quota_inconsistent(t));
    u64 left = std::max<u64>(units, 1);
    while (pending_next_ < keys_.size() && left > 0) {
      FSCTL_TRY_ASSIGN(auto step, transaction::drop_tree_step(t, keys_[pending_next_], left, pending_stats_));
      pending_units_ += step.units;
      left = step.units >= left ? 0 : left - step.units;
      if (!step.finished) break;
      ++pending_next_;
    }
    return {};
  }
  Status committed(u64) override {
    next_ = pending_next_;
    stats_ += pending_stats_;
    units_done_ += pending_units_;
    marked_ = true;
    if (sink_) {
      sink_->stats += pending_stats_;
      sink_->commits++;
      sink_->dropped = next_;
    }
    return {};
  }
  std::string progress_note() const override {
    return std::to_string(next_) + " of " + std::to_string(keys_.size()) +
           " deleted subvolumes dropped; a rerun resumes where the last commit stopped (so does the kernel's cleaner at the next mount)";
  }
  ProgressCounts progress_counts() const override {
    ProgressCounts c;
    c.tree_blocks_done = units_done_;
    return c;
  }

  [[nodiscard]] const transaction::DropStats& stats() const { return stats_; }
  [[nodiscard]] u64 dropped() const { return next_; }

 private:
  std::vector<Key> keys_;
  bool mark_quota_;
  bool marked_ = false;
  std::size_t next_ = 0, pending_next_ = 0;
  transaction::DropStats stats_, pending_stats_;
  u64 units_done_ = 0, pending_units_ = 0;
  Sink* sink_;
};

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

/// Recomputes the qgroup numbers after the drop and writes them, deleting
/// the dropped subvolumes' qgroups whose numbers are 0.
Status fix_qgroups(fs::FsInfo& fs, const FinishDropOptions& o, FinishDropResult& res) {
  FSCTL_TRY_ASSIGN(auto quota, qgroup::read_quota(fs));
  if (!quota) return {};
  FSCTL_TRY_ASSIGN(qgroup::Computed computed, qgroup::compute_qgroups(fs, *quota, 0, o.progress));
  qgroup::RepairOptions ro;
  ro.stop = o.stop;
  for (const auto& d : res.roots) {
    if (!d.dropped) continue;
    const u64 id = d.key.objectid;
    auto c = computed.counts.find(id);
    bool zero = c == computed.counts.end() || (c->second.rfer == 0 && c->second.excl == 0);
    if (zero && quota->qgroups.count(id)) ro.remove.insert(id);
  }
  FSCTL_TRY_ASSIGN(res.qgroups, qgroup::repair_qgroups(fs, *quota, computed, ro));
  if (res.qgroups->interrupted) res.interrupted = true;
  if (res.qgroups->wrote) res.qgroups_removed.assign(ro.remove.begin(), ro.remove.end());
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
  std::vector<Key> keys;
  for (const auto& d : res.roots) keys.push_back(d.key);
  const bool mark = quota.has_value() && !quota->inconsistent();
  FinishDropJob job(keys, mark);
  FinishDropJob::Sink rehearsal;
  transaction::JobFactory make = [&](fs::FsInfo&) -> Result<std::unique_ptr<transaction::BatchJob>> {
    rehearsal = {};
    return std::unique_ptr<transaction::BatchJob>(std::make_unique<FinishDropJob>(keys, mark, &rehearsal));
  };
  transaction::RunnerOptions ro;
  ro.batch = std::max<u64>(o.batch, 1);
  ro.dry_run = o.dry_run;
  ro.stop = o.stop;
  ro.progress = o.progress;
  FSCTL_TRY_ASSIGN(res.run, transaction::run_batches(fs, job, make, ro));
  res.stats = job.stats();
  std::size_t dropped = job.dropped();
  if (o.dry_run) {
    // What the whole run did on the rehearsal copy (when it was rehearsed).
    res.stats = rehearsal.stats;
    res.run.commits = rehearsal.commits;
    dropped = rehearsal.dropped;
  }
  for (std::size_t i = 0; i < dropped && i < res.roots.size(); ++i) res.roots[i].dropped = true;
  res.interrupted = res.run.interrupted;
  if (o.dry_run || res.interrupted || !job.done() || !quota) return res;
  FSCTL_TRY(fix_qgroups(fs, o, res));
  return res;
}

}  // namespace fsctl::rescue
