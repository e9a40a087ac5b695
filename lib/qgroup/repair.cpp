// SPDX-License-Identifier: GPL-2.0-only
// Offline qgroup rescan: one transaction over the quota tree.
#include "lib/qgroup/repair.h"

#include "lib/ctree/write.h"
#include "lib/format/qgroup_items.h"
#include "lib/transaction/reservation.h"
#include "lib/transaction/transaction.h"

namespace fsctl::qgroup {
using namespace fsctl::format;

Result<RepairResult> repair_qgroups(fs::FsInfo& fs, const QuotaState& quota, const Computed& computed) {
  RepairResult res;
  std::set<u64> subvols;
  for (auto& s : computed.subvols) subvols.insert(s.root_id);
  std::vector<u64> update, add;
  for (auto& [id, c] : computed.counts) {
    auto it = quota.qgroups.find(id);
    if (it != quota.qgroups.end() && it->second.has_info) {
      if (!(it->second.ondisk == c)) update.push_back(id);
    } else if (qgroup_level(id) == 0 && subvols.count(id)) {
      add.push_back(id);
    }
  }
  bool fix_status = quota.inconsistent() || quota.rescan_running();
  if (update.empty() && add.empty() && !fix_status) return res;

  // The changes, made once as a rehearsal (the reservation of this small
  // transaction: transaction::reserve_by_rehearsal) and once for real.
  auto apply = [&](transaction::Transaction& t) -> Status {
    FSCTL_TRY_ASSIGN(auto* qroot, t.root(QUOTA_TREE_OBJECTID));
    u64 transid = t.transid();
    auto info = [&](const QgroupCount& c) { return QgroupInfoRecord{transid, c.rfer, c.rfer_cmpr, c.excl, c.excl_cmpr}; };
    for (u64 id : update) {
      ctree::Path p;
      FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *qroot, Key{0, KeyType::QGROUP_INFO, id}, 0, p));
      if (!exact) return make_error(Errc::corrupt, "QGROUP_INFO of " + qgroupid_to_string(id) + " vanished");
      FSCTL_TRY(with_context(store_qgroup_info(ctree::item_data_mut(t, p), info(computed.counts.at(id))),
                             "QGROUP_INFO of " + qgroupid_to_string(id)));
    }
    for (u64 id : add) {
      FSCTL_TRY(ctree::insert_item(t, *qroot, Key{0, KeyType::QGROUP_INFO, id}, encode_qgroup_info(info(computed.counts.at(id)))));
      auto it = quota.qgroups.find(id);
      if (it == quota.qgroups.end() || !it->second.limit)
        FSCTL_TRY(ctree::insert_item(t, *qroot, Key{0, KeyType::QGROUP_LIMIT, id}, encode_qgroup_limit({})));
    }
    ctree::Path p;
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *qroot, Key{0, KeyType::QGROUP_STATUS, 0}, 0, p));
    if (!exact) return make_error(Errc::corrupt, "quota tree has no QGROUP_STATUS item");
    auto d = ctree::item_data_mut(t, p);
    FSCTL_TRY_ASSIGN(QgroupStatusRecord s, with_context(decode_qgroup_status(d), "QGROUP_STATUS"));
    if (fix_status) {
      s.flags = (s.flags & ~(QGROUP_STATUS_FLAG_RESCAN | QGROUP_STATUS_FLAG_INCONSISTENT)) | QGROUP_STATUS_FLAG_ON;
      s.rescan = ~0ULL;  // as a completed kernel rescan leaves it
    }
    s.generation = transid;
    return store_qgroup_status(d, s);
  };

  FSCTL_TRY_ASSIGN(auto trans, transaction::Transaction::start(fs));
  transaction::Reservation rsv;
  rsv.items_updated = update.size() + 1;
  rsv.items_inserted = 2 * add.size();
  FSCTL_TRY_ASSIGN(res.reserved_bytes, transaction::reserve_by_rehearsal(*trans, trans->reserve(rsv), false, apply));
  u64 transid = trans->transid();
  FSCTL_TRY(apply(*trans));
  res.qgroups_updated = update.size();
  res.qgroups_added = add.size();
  res.status_fixed = fix_status;
  FSCTL_TRY(trans->commit());
  res.wrote = true;
  res.transid = transid;
  res.used_bytes = trans->stats().used_bytes;
  res.blocks_written = trans->stats().blocks_written;
  return res;
}

}  // namespace fsctl::qgroup
