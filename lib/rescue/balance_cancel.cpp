// SPDX-License-Identifier: GPL-2.0-only
// Offline cancel of a paused or interrupted kernel balance
// (balance_cancel.h): a refusal from the data relocation tree, then one step
// of the batch runner deleting the BALANCE_ITEM, or the relocation trees
// dropped (drop_job.h) and the qgroups recomputed.
#include "lib/rescue/balance_cancel.h"

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/fs/leftover_work.h"
#include "lib/qgroup/qgroup.h"
#include "lib/rescue/drop_job.h"
#include "lib/transaction/batch_runner.h"
#include "lib/transaction/reservation.h"

namespace fsctl::rescue {
using namespace fsctl::format;

namespace {

const Key BALANCE_KEY{BALANCE_OBJECTID, KeyType::TEMPORARY_ITEM, 0};

/// The one step: the BALANCE_ITEM goes.
class BalanceCancelJob final : public transaction::OneStepJob {
 public:
  BalanceCancelJob() : OneStepJob("the balance item is still there", "the balance item was deleted") {}
  std::optional<u64> estimate_blocks(u64) const override { return 16; }
  Result<u64> reserve_bound(transaction::Transaction& t, u64) override {
    transaction::Reservation r;
    r.trees = {ROOT_TREE_OBJECTID};
    r.items_deleted = 1;
    return t.reserve(r);
  }
  Status apply(transaction::Transaction& t, u64) override {
    FSCTL_TRY_ASSIGN(auto* rt, t.root(ROOT_TREE_OBJECTID));
    ctree::Path p;
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *rt, BALANCE_KEY, 0, p));
    if (!exact) return make_error(Errc::corrupt, "the BALANCE_ITEM of the root tree vanished");
    return ctree::delete_item(t, *rt, p);
  }
};

/// What an interrupted relocation left in the data relocation tree
/// (objectid -9), past its root directory (inode 256: INODE_ITEM,
/// INODE_REF): the relocation inodes the kernel makes for every block group
/// it relocates (relocation.c create_reloc_inode: an INODE_ITEM and an
/// ORPHAN item, which the next mount's orphan cleanup deletes) are
/// `removable`; anything else (file extents of a data relocation) is
/// `other`, its first key.
struct DataRelocLeft {
  std::vector<Key> removable;
  std::optional<Key> other;
};
Result<DataRelocLeft> data_reloc_leftover(fs::FsInfo& fs) {
  DataRelocLeft out;
  auto root = fs.find_root(DATA_RELOC_TREE_OBJECTID);
  if (!root) return out;
  FSCTL_TRY(ctree::for_each_item(fs, *root, {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
    Key k = leaf.item_key(slot);
    if (k.objectid == FIRST_FREE_OBJECTID && (k.type == KeyType::INODE_ITEM || k.type == KeyType::INODE_REF))
      return ctree::Visit::next;
    if ((k.objectid > FIRST_FREE_OBJECTID && k.objectid <= LAST_FREE_OBJECTID && k.type == KeyType::INODE_ITEM) ||
        (k.objectid == ORPHAN_OBJECTID && k.type == KeyType::ORPHAN_ITEM)) {
      out.removable.push_back(k);
      return ctree::Visit::next;
    }
    out.other = k;
    return ctree::Visit::stop;
  }));
  return out;
}

/// The relocation trees dropped, the BALANCE_ITEM with the first commit,
/// then the qgroups recomputed.
Result<BalanceCancelResult> drop_relocation_trees(fs::FsInfo& fs, const BalanceCancelOptions& o, BalanceCancelResult& res) {
  FSCTL_TRY_ASSIGN(auto quota, qgroup::read_quota(fs));
  DropRunOptions d;
  for (u64 id : res.relocation_trees) d.roots.push_back(Key{TREE_RELOC_OBJECTID, KeyType::ROOT_ITEM, id});
  // No qgroup number changes: a relocation tree is no subvolume, and what
  // it alone holds counts nowhere. The numbers are checked after the drop
  // (and written only if the kernel's were wrong), so the status is never
  // marked inconsistent meanwhile.
  if (res.balance_found) d.delete_items.emplace_back(ROOT_TREE_OBJECTID, BALANCE_KEY);
  for (const Key& k : res.relocation_inode_items) d.delete_items.emplace_back(DATA_RELOC_TREE_OBJECTID, k);
  static_cast<RunControl&>(d) = o;
  FSCTL_TRY_ASSIGN(DropRun run, run_drops(fs, d));
  res.drop = run.stats;
  res.relocation_trees_dropped = run.dropped;
  res.commits = run.run.commits;
  res.run.wrote = !o.dry_run && run.run.commits > 0;
  res.run.transid = res.run.wrote ? fs.super().generation.get() : 0;
  res.run.reserved_bytes = run.run.reserved_bytes;
  res.run.used_bytes = run.run.used_bytes;
  res.run.blocks_written = run.run.tree_blocks_written;
  res.run.rehearsed = run.run.rehearsed;
  res.run.interrupted = run.run.interrupted;
  if (!run.done || !quota) return res;
  FSCTL_TRY_ASSIGN(QgroupFix fix, recompute_qgroups(fs, {}, o.stop, o.progress));
  res.qgroups = fix.repair;
  if (res.qgroups && res.qgroups->interrupted) res.run.interrupted = true;
  if (res.qgroups && res.qgroups->wrote) res.run.transid = res.qgroups->transid;
  return res;
}

}  // namespace

Result<BalanceCancelResult> cancel_balance(fs::FsInfo& fs, const BalanceCancelOptions& o) {
  BalanceCancelResult res;
  FSCTL_TRY_ASSIGN(auto work, fs::find_leftover_work(fs));
  FSCTL_TRY_ASSIGN(auto data_left, data_reloc_leftover(fs));
  if (data_left.other)
    return make_error(Errc::unsupported, "the data relocation tree holds what an interrupted data relocation left (first key " +
                                             key_to_string(*data_left.other) +
                                             "); clearing it offline is not supported yet: nothing was written");
  res.relocation_trees = work.relocation_trees;
  res.relocation_inode_items = data_left.removable;
  if (work.balance_flags) {
    res.balance_found = true;
    res.balance_flags = *work.balance_flags;
  }
  if (!work.relocation_trees.empty() || !data_left.removable.empty()) return drop_relocation_trees(fs, o, res);
  if (!work.balance_flags) return res;

  transaction::JobFactory make = [](fs::FsInfo&) -> Result<std::unique_ptr<transaction::BatchJob>> {
    return std::unique_ptr<transaction::BatchJob>(std::make_unique<BalanceCancelJob>());
  };
  FSCTL_TRY_ASSIGN(res.run, transaction::run_one_commit(fs, make, o.dry_run, o.stop));
  return res;
}

}  // namespace fsctl::rescue
