// SPDX-License-Identifier: GPL-2.0-only
// Disabling quota offline (quota_disable.h): one step of the batch runner
// that deletes the quota tree (Transaction::delete_tree).
#include "lib/qgroup/quota_disable.h"

#include "lib/ctree/tree_walk.h"
#include "lib/format/super.h"
#include "lib/qgroup/qgroup.h"
#include "lib/transaction/batch_runner.h"
#include "lib/transaction/reservation.h"

namespace fsctl::qgroup {
using namespace fsctl::format;

namespace {

/// The one step: the quota tree and its ROOT_ITEM go.
class QuotaDisableJob final : public transaction::OneStepJob {
 public:
  explicit QuotaDisableJob(u64 blocks)
      : OneStepJob("the quota tree is still there", "the quota tree was deleted"), blocks_(blocks) {}
  std::optional<u64> estimate_blocks(u64) const override { return blocks_ + 16; }
  Result<u64> reserve_bound(transaction::Transaction& t, u64) override {
    transaction::Reservation r;
    r.trees = {ROOT_TREE_OBJECTID};
    r.items_deleted = 1;
    r.trees_deleted = {QUOTA_TREE_OBJECTID};
    return t.reserve(r);
  }
  Status apply(transaction::Transaction& t, u64) override { return t.delete_tree(QUOTA_TREE_OBJECTID); }

 private:
  u64 blocks_;
};

/// Blocks of the committed quota tree (read only).
Result<u64> count_blocks(fs::FsInfo& fs, const ctree::RootRef& root) {
  u64 n = 0;
  ctree::RootSets sets;
  FSCTL_TRY(ctree::walk_trees(fs, {root}, sets, [&](const cache::TreeBlockRef&, u32) -> Status {
    ++n;
    return {};
  }));
  return n;
}

}  // namespace

Result<QuotaDisableResult> disable_quota(fs::FsInfo& fs, const QuotaDisableOptions& o) {
  QuotaDisableResult res;
  auto root = fs.find_root(QUOTA_TREE_OBJECTID);
  if (!root) return res;
  res.quota_was_enabled = true;
  FSCTL_TRY_ASSIGN(auto quota, read_quota(fs));
  if (quota) {
    res.status_flags = quota->flags;
    for (auto& [id, q] : quota->qgroups) {
      if (q.has_info) ++res.qgroups;
      res.relations += q.parents.size();
    }
  }
  // Simple quotas: the kernel's quota disable deletes the quota tree and
  // keeps the SIMPLE_QUOTA incompat bit, because the EXTENT_OWNER_REFs of the
  // data extents born under them stay and are valid only with the bit
  // (checked on kernel 6.18: bit and refs remain, btrfs check 6.19 clean).
  // The same here; btrfstune --remove-simple-quota also rewrites every such
  // extent item to clear the bit.
  res.simple_quota = (fs.super().incompat_flags.get() & INCOMPAT_SIMPLE_QUOTA) || (quota && quota->simple_mode());
  FSCTL_TRY_ASSIGN(res.quota_tree_blocks, count_blocks(fs, *root));

  transaction::JobFactory make = [&](fs::FsInfo&) -> Result<std::unique_ptr<transaction::BatchJob>> {
    return std::unique_ptr<transaction::BatchJob>(std::make_unique<QuotaDisableJob>(res.quota_tree_blocks));
  };
  FSCTL_TRY_ASSIGN(res.run, transaction::run_one_commit(fs, make, o.dry_run, o.stop));
  return res;
}

}  // namespace fsctl::qgroup
