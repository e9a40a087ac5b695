// SPDX-License-Identifier: GPL-2.0-only
// DelayedRefs (delayed_refs.h): extent items of tree blocks at commit (kernel
// extent-tree.c alloc_reserved_tree_block / __btrfs_free_extent).
#include "lib/transaction/delayed_refs.h"

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/extent_item.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

Status DelayedRefs::apply_drops(Transaction& t) {
  if (drops_.empty()) return {};
  auto drops = std::move(drops_);
  drops_.clear();
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  for (auto& [bytenr, ref] : drops) {
    ctree::Path p;
    Key k{bytenr, KeyType::METADATA_ITEM, ref.level};
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *ext, k, 0, p));
    if (!exact) return make_error(Errc::corrupt, "extent item of tree block " + std::to_string(bytenr) + " vanished");
    FSCTL_TRY(ctree::delete_item(t, *ext, p));
  }
  return {};
}

Status DelayedRefs::apply_adds(Transaction& t) {
  if (adds_.empty()) return {};
  auto adds = std::move(adds_);
  adds_.clear();
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  for (auto& [bytenr, ref] : adds) {
    if (!t.is_new(bytenr)) continue;  // freed again meanwhile
    ExtentRecord rec;
    rec.refs = 1;
    rec.generation = t.transid();
    rec.flags = EXTENT_FLAG_TREE_BLOCK;
    rec.level = ref.level;
    ExtentRef tref;
    tref.type = KeyType::TREE_BLOCK_REF;
    tref.root = ref.owner;
    rec.inline_refs.push_back(tref);
    std::vector<u8> item = encode_extent_item(rec);
    Key key{bytenr, KeyType::METADATA_ITEM, ref.level};
    // A block of this transaction whose item an earlier round inserted,
    // freed and allocated again since (the allocator reuses such blocks
    // first) before its drop was applied: that item is this key. It
    // becomes the new one in place, and the drop is cancelled. (Inserting
    // failed with "already exists": convert of an 8 TiB 4K-node image, an
    // extent leaf merged away in a commit's drop phase and taken by the
    // next copy.) With another level the keys differ: the drop stays.
    if (auto d = drops_.find(bytenr); d != drops_.end() && d->second.level == ref.level) {
      ctree::Path p;
      FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *ext, key, 0, p));
      auto data = ctree::item_data_mut(t, p);
      if (!exact || data.size() != item.size())
        return make_error(Errc::corrupt, "extent item of tree block " + std::to_string(bytenr) + ", freed and allocated again, vanished");
      FSCTL_TRY(store_extent_item(data, rec));
      drops_.erase(d);
    } else {
      FSCTL_TRY(ctree::insert_item(t, *ext, key, item));
    }
  }
  return {};
}

}  // namespace fsctl::transaction
