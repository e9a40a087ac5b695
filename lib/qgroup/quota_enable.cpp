// SPDX-License-Identifier: GPL-2.0-only
// Enabling quota offline (quota_enable.h): one step of the batch runner
// creating the quota tree and its items.
#include "lib/qgroup/quota_enable.h"

#include <algorithm>

#include "lib/ctree/write.h"
#include "lib/format/qgroup_items.h"
#include "lib/transaction/batch_runner.h"
#include "lib/transaction/reservation.h"

namespace fsctl::qgroup {
using namespace fsctl::format;

namespace {

/// The one step: the quota tree, its status item and the level-0 qgroups.
class QuotaEnableJob final : public transaction::OneStepJob {
 public:
  explicit QuotaEnableJob(std::vector<u64> subvols)
      : OneStepJob("no quota tree yet", "the quota tree was created"), subvols_(std::move(subvols)) {}
  std::optional<u64> estimate_blocks(u64) const override { return 16 + subvols_.size() / 32; }
  Result<u64> reserve_bound(transaction::Transaction& t, u64) override {
    transaction::Reservation r;
    r.trees = {ROOT_TREE_OBJECTID, QUOTA_TREE_OBJECTID};
    r.items_inserted = 2 + 2 * subvols_.size();
    return t.reserve(r);
  }
  Status apply(transaction::Transaction& t, u64) override {
    FSCTL_TRY_ASSIGN(auto* q, t.create_tree(QUOTA_TREE_OBJECTID));
    QgroupStatusRecord s;
    s.generation = t.transid();
    // As the kernel's quota enable leaves it until its rescan ends: the
    // numbers are not known yet (INCONSISTENT) and a rescan from the first
    // key is due (RESCAN, rescan 0), which a mount resumes.
    s.flags = QGROUP_STATUS_FLAG_ON | QGROUP_STATUS_FLAG_INCONSISTENT | QGROUP_STATUS_FLAG_RESCAN;
    s.rescan = 0;
    FSCTL_TRY(ctree::insert_item(t, *q, Key{0, KeyType::QGROUP_STATUS, 0}, encode_qgroup_status(s)));
    for (u64 id : subvols_) {
      FSCTL_TRY(ctree::insert_item(t, *q, Key{0, KeyType::QGROUP_INFO, id}, encode_qgroup_info({t.transid(), 0, 0, 0, 0})));
      FSCTL_TRY(ctree::insert_item(t, *q, Key{0, KeyType::QGROUP_LIMIT, id}, encode_qgroup_limit({})));
    }
    return {};
  }

 private:
  std::vector<u64> subvols_;
};

}  // namespace

Result<QuotaEnableResult> enable_quota(fs::FsInfo& fs, const QuotaEnableOptions& o) {
  QuotaEnableResult res;
  if (fs.find_root(QUOTA_TREE_OBJECTID)) {
    res.already_enabled = true;
    return res;
  }
  // The subvolumes the kernel's quota enable gives a qgroup: the top level
  // and every subvolume that is not being deleted (refs > 0).
  std::vector<u64> subvols;
  for (const auto& e : fs.root_entries())
    if (e.key.type == KeyType::ROOT_ITEM && is_fstree(e.key.objectid) && e.item.refs > 0) subvols.push_back(e.key.objectid);
  std::sort(subvols.begin(), subvols.end());
  subvols.erase(std::unique(subvols.begin(), subvols.end()), subvols.end());

  transaction::JobFactory make = [&](fs::FsInfo&) -> Result<std::unique_ptr<transaction::BatchJob>> {
    return std::unique_ptr<transaction::BatchJob>(std::make_unique<QuotaEnableJob>(subvols));
  };
  res.qgroups_created = subvols.size();
  FSCTL_TRY_ASSIGN(res.run, transaction::run_one_commit(fs, make, o.dry_run, o.stop));
  return res;
}

}  // namespace fsctl::qgroup
