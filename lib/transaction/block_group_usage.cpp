// SPDX-License-Identifier: GPL-2.0-only
// BlockGroupUsage (block_group_usage.h): BLOCK_GROUP_ITEM `used` at commit
// (kernel update_block_group_item).
#include "lib/transaction/block_group_usage.h"

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/block_group_item.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

Status BlockGroupUsage::apply(Transaction& t) {
  // A block group created by this transaction gets its item first.
  FSCTL_TRY(t.chunks().insert_pending(t));
  if (delta_.empty()) return {};
  auto deltas = std::move(delta_);
  delta_.clear();
  for (auto& [start, delta] : deltas) {
    if (delta == 0) continue;
    const fs::BlockGroup* found = t.fs().block_group_of(start);
    if (!found || found->start != start) return make_error(Errc::corrupt, "block group " + std::to_string(start) + " vanished");
    // A copy: a chunk allocated while the item's path is copied changes
    // FsInfo's block group list.
    const fs::BlockGroup bg_copy = *found;
    const fs::BlockGroup* bg = &bg_copy;
    // The item lives in the block group tree or the extent tree; look in
    // both, as a conversion may be moving it.
    bool done = false;
    for (u64 tree : {BLOCK_GROUP_TREE_OBJECTID, EXTENT_TREE_OBJECTID}) {
      if (!t.fs().find_root(tree) && !t.roots().has(tree)) continue;
      if (t.roots().deleted(tree)) continue;
      FSCTL_TRY_ASSIGN(auto* r, t.root(tree));
      Key k{bg->start, KeyType::BLOCK_GROUP_ITEM, bg->length};
      FSCTL_TRY_ASSIGN(auto found, ctree::lookup_item(t, r->ref(), k));
      if (!found) continue;
      ctree::Path p;
      FSCTL_TRY(ctree::search_slot_for_write(t, *r, k, 0, p));
      auto d = ctree::item_data_mut(t, p);
      auto item = decode_block_group_item(d);
      if (!item) return make_error(item.error().context("block group " + std::to_string(start)));
      u64 used = static_cast<u64>(static_cast<s64>(item->used) + delta);
      item->used = used;
      FSCTL_TRY(store_block_group_item(d, *item));
      used_written_[start] = used;
      done = true;
      break;
    }
    if (!done) return make_error(Errc::corrupt, "no BLOCK_GROUP_ITEM for block group " + std::to_string(start));
  }
  return {};
}

void BlockGroupUsage::committed(fs::FsInfo& fs) const {
  for (auto& [start, used] : used_written_) fs.set_block_group_used(start, used);
}

}  // namespace fsctl::transaction
