// SPDX-License-Identifier: GPL-2.0-only
// Offline qgroup rescan: one step of the batch runner, one transaction over
// the quota tree.
#include "lib/qgroup/repair.h"

#include "lib/ctree/write.h"
#include "lib/format/qgroup_items.h"
#include "lib/transaction/batch_runner.h"
#include "lib/transaction/reservation.h"
#include "lib/transaction/transaction.h"

namespace fsctl::qgroup {
using namespace fsctl::format;

namespace {

/// Deletes `key` from the quota tree when it is there.
Status delete_if_present(transaction::Transaction& t, ctree::WriteRoot& qroot, const Key& key) {
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, qroot, key, 0, p));
  if (!exact) return {};
  return ctree::delete_item(t, qroot, p);
}

/// Deletes qgroup `id`: INFO, LIMIT and both halves of each relation.
Status remove_qgroup(transaction::Transaction& t, ctree::WriteRoot& qroot, const QuotaState& quota, u64 id) {
  FSCTL_TRY(delete_if_present(t, qroot, Key{0, KeyType::QGROUP_INFO, id}));
  FSCTL_TRY(delete_if_present(t, qroot, Key{0, KeyType::QGROUP_LIMIT, id}));
  auto it = quota.qgroups.find(id);
  if (it == quota.qgroups.end()) return {};
  for (u64 parent : it->second.parents) {
    FSCTL_TRY(delete_if_present(t, qroot, Key{id, KeyType::QGROUP_RELATION, parent}));
    FSCTL_TRY(delete_if_present(t, qroot, Key{parent, KeyType::QGROUP_RELATION, id}));
  }
  return {};
}

}  // namespace

Result<RepairResult> repair_qgroups(fs::FsInfo& fs, const QuotaState& quota, const Computed& computed,
                                    const RepairOptions& opts) {
  RepairResult res;
  std::set<u64> subvols;
  for (auto& s : computed.subvols) subvols.insert(s.root_id);
  std::vector<u64> update, add;
  std::set<u64> remove;
  for (u64 id : opts.remove)
    if (quota.qgroups.count(id)) remove.insert(id);
  for (auto& [id, c] : computed.counts) {
    if (remove.count(id)) continue;
    auto it = quota.qgroups.find(id);
    if (it != quota.qgroups.end() && it->second.has_info) {
      if (!(it->second.ondisk == c)) update.push_back(id);
    } else if (qgroup_level(id) == 0 && subvols.count(id)) {
      add.push_back(id);
    }
  }
  bool fix_status = quota.inconsistent() || quota.rescan_running();
  if (update.empty() && add.empty() && remove.empty() && !fix_status) return res;

  // One step: the qgroup items and the status item in the quota tree.
  class RepairJob final : public transaction::BatchJob {
   public:
    RepairJob(const QuotaState& quota, const Computed& computed, const std::vector<u64>& update, const std::vector<u64>& add,
              const std::set<u64>& remove, bool fix_status)
        : quota_(quota), computed_(computed), update_(update), add_(add), remove_(remove), fix_status_(fix_status) {}
    bool done() const override { return done_; }
    u64 next_units(u64) const override { return 0; }
    std::optional<u64> estimate_blocks(u64) const override {
      return 8 * (update_.size() + 2 * add_.size() + 4 * remove_.size() + 1);
    }
    Result<u64> reserve_bound(transaction::Transaction& t, u64) override {
      transaction::Reservation rsv;
      rsv.items_updated = update_.size() + 1;
      rsv.items_inserted = 2 * add_.size();
      for (u64 id : remove_) {
        auto it = quota_.qgroups.find(id);
        rsv.items_deleted += 2 + 2 * (it == quota_.qgroups.end() ? 0 : it->second.parents.size());
      }
      return t.reserve(rsv);
    }
    Status apply(transaction::Transaction& t, u64) override { return apply_changes(t); }
    Status committed(u64) override {
      done_ = true;
      return {};
    }
    std::string progress_note() const override { return "the qgroup items were written"; }

   private:
    Status apply_changes(transaction::Transaction& t) {
      FSCTL_TRY_ASSIGN(auto* qroot, t.root(QUOTA_TREE_OBJECTID));
      u64 transid = t.transid();
      auto info = [&](const QgroupCount& c) { return QgroupInfoRecord{transid, c.rfer, c.rfer_cmpr, c.excl, c.excl_cmpr}; };
      for (u64 id : update_) {
        ctree::Path p;
        FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *qroot, Key{0, KeyType::QGROUP_INFO, id}, 0, p));
        if (!exact) return make_error(Errc::corrupt, "QGROUP_INFO of " + qgroupid_to_string(id) + " vanished");
        FSCTL_TRY(with_context(store_qgroup_info(ctree::item_data_mut(t, p), info(computed_.counts.at(id))),
                               "QGROUP_INFO of " + qgroupid_to_string(id)));
      }
      for (u64 id : add_) {
        FSCTL_TRY(ctree::insert_item(t, *qroot, Key{0, KeyType::QGROUP_INFO, id}, encode_qgroup_info(info(computed_.counts.at(id)))));
        auto it = quota_.qgroups.find(id);
        if (it == quota_.qgroups.end() || !it->second.limit)
          FSCTL_TRY(ctree::insert_item(t, *qroot, Key{0, KeyType::QGROUP_LIMIT, id}, encode_qgroup_limit({})));
      }
      for (u64 id : remove_) FSCTL_TRY(remove_qgroup(t, *qroot, quota_, id));
      ctree::Path p;
      FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *qroot, Key{0, KeyType::QGROUP_STATUS, 0}, 0, p));
      if (!exact) return make_error(Errc::corrupt, "quota tree has no QGROUP_STATUS item");
      auto d = ctree::item_data_mut(t, p);
      FSCTL_TRY_ASSIGN(QgroupStatusRecord s, with_context(decode_qgroup_status(d), "QGROUP_STATUS"));
      if (fix_status_) {
        s.flags = (s.flags & ~(QGROUP_STATUS_FLAG_RESCAN | QGROUP_STATUS_FLAG_INCONSISTENT)) | QGROUP_STATUS_FLAG_ON;
        s.rescan = ~0ULL;  // as a completed kernel rescan leaves it
      }
      s.generation = transid;
      return store_qgroup_status(d, s);
    }

    const QuotaState& quota_;
    const Computed& computed_;
    const std::vector<u64>& update_;
    const std::vector<u64>& add_;
    const std::set<u64>& remove_;
    bool fix_status_;
    bool done_ = false;
  };

  RepairJob job(quota, computed, update, add, remove, fix_status);
  transaction::JobFactory make = [&](fs::FsInfo&) -> Result<std::unique_ptr<transaction::BatchJob>> {
    return std::unique_ptr<transaction::BatchJob>(std::make_unique<RepairJob>(quota, computed, update, add, remove, fix_status));
  };
  transaction::RunnerOptions ro;
  ro.stop = opts.stop;
  FSCTL_TRY_ASSIGN(auto run, transaction::run_batches(fs, job, make, ro));
  if (run.interrupted) {
    res.interrupted = true;
    return res;
  }
  res.qgroups_updated = update.size();
  res.qgroups_added = add.size();
  res.qgroups_removed = remove.size();
  res.status_fixed = fix_status;
  res.wrote = true;
  res.transid = fs.super().generation.get();
  res.reserved_bytes = run.reserved_bytes;
  res.used_bytes = run.used_bytes;
  res.blocks_written = run.tree_blocks_written;
  return res;
}

}  // namespace fsctl::qgroup
