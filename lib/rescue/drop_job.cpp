// SPDX-License-Identifier: GPL-2.0-only
// Dropping trees to the end (drop_job.h): a multi-step job of the batch
// runner over lib/transaction/tree_drop, and the qgroup rescan after it.
#include "lib/rescue/drop_job.h"

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/qgroup_items.h"
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

/// Deletes item `key` of tree `tree` when it is there.
Status delete_if_present(Transaction& t, u64 tree, const Key& key) {
  FSCTL_TRY_ASSIGN(auto* root, t.root(tree));
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *root, key, 0, p));
  if (!exact) return {};
  return ctree::delete_item(t, *root, p);
}

/// The job: the trees in order, each dropped step after step.
class DropJob final : public transaction::BatchJob {
 public:
  /// `sink`, when set, is given each committed step's counters and commits
  /// (a dry run reports its rehearsal's).
  struct Sink {
    transaction::DropStats stats;
    u64 commits = 0;
    std::size_t dropped = 0;
  };
  DropJob(const DropRunOptions& o, Sink* sink = nullptr) : keys_(o.roots), o_(o), sink_(sink) {}

  bool done() const override { return first_done_ && next_ >= keys_.size(); }
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
    if (!first_done_) {
      if (o_.mark_quota_inconsistent) FSCTL_TRY(mark_quota_inconsistent(t));
      for (const auto& [tree, key] : o_.delete_items) FSCTL_TRY(delete_if_present(t, tree, key));
    }
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
    first_done_ = true;
    if (sink_) {
      sink_->stats += pending_stats_;
      sink_->commits++;
      sink_->dropped = next_;
    }
    return {};
  }
  std::string progress_note() const override {
    return std::to_string(next_) + " of " + std::to_string(keys_.size()) +
           " trees dropped; a rerun resumes where the last commit stopped (so does the kernel at the next mount)";
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
  const DropRunOptions& o_;
  bool first_done_ = false;
  std::size_t next_ = 0, pending_next_ = 0;
  transaction::DropStats stats_, pending_stats_;
  u64 units_done_ = 0, pending_units_ = 0;
  Sink* sink_;
};

}  // namespace

Result<DropRun> run_drops(fs::FsInfo& fs, const DropRunOptions& o) {
  DropRun out;
  DropJob job(o);
  DropJob::Sink rehearsal;
  transaction::JobFactory make = [&](fs::FsInfo&) -> Result<std::unique_ptr<transaction::BatchJob>> {
    rehearsal = {};
    return std::unique_ptr<transaction::BatchJob>(std::make_unique<DropJob>(o, &rehearsal));
  };
  transaction::RunnerOptions ro;
  ro.batch = std::max<u64>(o.batch, 1);
  ro.dry_run = o.dry_run;
  ro.stop = o.stop;
  ro.progress = o.progress;
  FSCTL_TRY_ASSIGN(out.run, transaction::run_batches(fs, job, make, ro));
  out.stats = job.stats();
  out.dropped = job.dropped();
  out.done = job.done() && !o.dry_run && !out.run.interrupted;
  if (o.dry_run) {
    // What the whole run did on the rehearsal copy (when it was rehearsed).
    out.stats = rehearsal.stats;
    out.run.commits = rehearsal.commits;
    out.dropped = rehearsal.dropped;
  }
  return out;
}

Result<QgroupFix> recompute_qgroups(fs::FsInfo& fs, const std::set<u64>& removable, const StopRequest* stop,
                                    ProgressObserver* progress) {
  QgroupFix out;
  FSCTL_TRY_ASSIGN(auto quota, qgroup::read_quota(fs));
  if (!quota) return out;
  FSCTL_TRY_ASSIGN(qgroup::Computed computed, qgroup::compute_qgroups(fs, *quota, 0, progress));
  qgroup::RepairOptions ro;
  ro.stop = stop;
  for (u64 id : removable) {
    auto c = computed.counts.find(id);
    bool zero = c == computed.counts.end() || (c->second.rfer == 0 && c->second.excl == 0);
    if (zero && quota->qgroups.count(id)) ro.remove.insert(id);
  }
  FSCTL_TRY_ASSIGN(out.repair, qgroup::repair_qgroups(fs, *quota, computed, ro));
  if (out.repair->wrote) out.removed.assign(ro.remove.begin(), ro.remove.end());
  return out;
}

}  // namespace fsctl::rescue
