// SPDX-License-Identifier: GPL-2.0-only
// Extent items of tree blocks and block group usage at commit (kernel
// extent-tree.c alloc_reserved_tree_block / __btrfs_free_extent /
// update_block_group_item). Skinny METADATA_ITEMs with one inline
// TREE_BLOCK_REF: the only form unshared trees use on skinny filesystems.
#include <cstring>

#include "lib/ctree/search.h"
#include "lib/ctree/tree_walk.h"
#include "lib/format/decode.h"
#include "lib/format/items.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

Status Transaction::check_droppable(u64 bytenr, u64 owner, u8 level) {
  FSCTL_TRY_ASSIGN(auto* ext, root(EXTENT_TREE_OBJECTID));
  Key k{bytenr, KeyType::METADATA_ITEM, level};
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot(*this, ext->ref(), k, p));
  std::string what = "tree block " + std::to_string(bytenr) + " (owner " + std::to_string(owner) + ", level " + std::to_string(level) + ")";
  if (!exact) return make_error(Errc::corrupt, what + ": no METADATA_ITEM in the extent tree");
  FSCTL_TRY_ASSIGN(auto rec, decode_extent_item(k, p.item_data()));
  if (rec.refs != 1 || (rec.flags & BLOCK_FLAG_FULL_BACKREF) || rec.inline_refs.size() != 1 ||
      rec.inline_refs[0].type != KeyType::TREE_BLOCK_REF || rec.inline_refs[0].root != owner)
    return make_error(Errc::unsupported, what + " is shared or has other references (refs " + std::to_string(rec.refs) +
                                             "); modifying shared trees is not supported");
  FSCTL_TRY_ASSIGN(bool more, ctree::next_item(*this, p));
  // Keyed refs (TREE_BLOCK_REF 176 .. SHARED_DATA_REF 184) follow the
  // extent item; a BLOCK_GROUP_ITEM may share the objectid and is no ref.
  if (more && p.key().objectid == bytenr && p.key().type >= KeyType::TREE_BLOCK_REF && p.key().type <= KeyType::SHARED_DATA_REF)
    return make_error(Errc::unsupported, what + " has keyed back references; modifying shared trees is not supported");
  return {};
}

Status Transaction::check_copyable(u64 root_id, const std::vector<Key>* keys) {
  auto r = fs_.find_root(root_id);
  if (!r) return {};
  std::set<u64> seen;
  auto check = [&](const cache::TreeBlockRef& b) -> Status {
    if (!seen.insert(b->bytenr).second) return {};
    return check_droppable(b->bytenr, root_id, b->view().level());
  };
  if (!keys) {
    ctree::RootSets sets;
    return ctree::walk_trees(*this, {*r}, sets, [&](const cache::TreeBlockRef& b, u32) { return check(b); });
  }
  for (const Key& k : *keys) {
    ctree::Path p;
    FSCTL_TRY(ctree::search_slot(*this, *r, k, p));
    for (auto& n : p.nodes)
      if (n) FSCTL_TRY(check(n));
  }
  return {};
}

Status Transaction::apply_extent_drops() {
  if (pending_drop_.empty()) return {};
  auto drops = std::move(pending_drop_);
  pending_drop_.clear();
  FSCTL_TRY_ASSIGN(auto* ext, root(EXTENT_TREE_OBJECTID));
  for (auto& [bytenr, ref] : drops) {
    ctree::Path p;
    Key k{bytenr, KeyType::METADATA_ITEM, ref.level};
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(*this, *ext, k, 0, p));
    if (!exact) return make_error(Errc::corrupt, "extent item of tree block " + std::to_string(bytenr) + " vanished");
    FSCTL_TRY(ctree::delete_item(*this, *ext, p));
  }
  return {};
}

Status Transaction::apply_extent_adds() {
  if (pending_add_.empty()) return {};
  auto adds = std::move(pending_add_);
  pending_add_.clear();
  FSCTL_TRY_ASSIGN(auto* ext, root(EXTENT_TREE_OBJECTID));
  for (auto& [bytenr, ref] : adds) {
    if (!is_new(bytenr)) continue;  // freed again meanwhile
    u8 item[sizeof(ExtentItem) + 9] = {};
    auto* ei = reinterpret_cast<ExtentItem*>(item);
    ei->refs.set(1);
    ei->generation.set(transid_);
    ei->flags.set(EXTENT_FLAG_TREE_BLOCK);
    item[sizeof(ExtentItem)] = KeyType::TREE_BLOCK_REF;
    store_le<u64>(item + sizeof(ExtentItem) + 1, ref.owner);
    Key key{bytenr, KeyType::METADATA_ITEM, ref.level};
    // A block of this transaction whose item an earlier round inserted,
    // freed and allocated again since (the allocator reuses such blocks
    // first) before its drop was applied: that item is this key. It
    // becomes the new one in place, and the drop is cancelled. (Inserting
    // failed with "already exists": convert of an 8 TiB 4K-node image, an
    // extent leaf merged away in a commit's drop phase and taken by the
    // next copy.) With another level the keys differ: the drop stays.
    if (auto d = pending_drop_.find(bytenr); d != pending_drop_.end() && d->second.level == ref.level) {
      ctree::Path p;
      FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(*this, *ext, key, 0, p));
      auto data = ctree::item_data_mut(*this, p);
      if (!exact || data.size() != sizeof(item))
        return make_error(Errc::corrupt, "extent item of tree block " + std::to_string(bytenr) + ", freed and allocated again, vanished");
      std::memcpy(data.data(), item, sizeof(item));
      pending_drop_.erase(d);
    } else {
      FSCTL_TRY(ctree::insert_item(*this, *ext, key, item));
    }
    if (is_new(bytenr)) extent_inserted_.insert(bytenr);
  }
  return {};
}

Status Transaction::apply_block_group_usage() {
  // A block group created by this transaction gets its item first.
  FSCTL_TRY(insert_pending_chunks());
  if (bg_delta_.empty()) return {};
  auto deltas = std::move(bg_delta_);
  bg_delta_.clear();
  for (auto& [start, delta] : deltas) {
    if (delta == 0) continue;
    const fs::BlockGroup* found = fs_.block_group_of(start);
    if (!found || found->start != start) return make_error(Errc::corrupt, "block group " + std::to_string(start) + " vanished");
    // A copy: a chunk allocated while the item's path is copied changes
    // FsInfo's block group list.
    const fs::BlockGroup bg_copy = *found;
    const fs::BlockGroup* bg = &bg_copy;
    // The item lives in the block group tree or the extent tree; look in
    // both, as a conversion may be moving it.
    bool done = false;
    for (u64 tree : {BLOCK_GROUP_TREE_OBJECTID, EXTENT_TREE_OBJECTID}) {
      if (!fs_.find_root(tree) && !roots_.count(tree)) continue;
      if (deleted_trees_.count(tree)) continue;
      FSCTL_TRY_ASSIGN(auto* r, root(tree));
      Key k{bg->start, KeyType::BLOCK_GROUP_ITEM, bg->length};
      FSCTL_TRY_ASSIGN(auto found, ctree::lookup_item(*this, r->ref(), k));
      if (!found) continue;
      ctree::Path p;
      FSCTL_TRY(ctree::search_slot_for_write(*this, *r, k, 0, p));
      auto d = ctree::item_data_mut(*this, p);
      if (d.size() < sizeof(BlockGroupItem)) return make_error(Errc::corrupt, "short block group item " + std::to_string(start));
      u64 used = static_cast<u64>(static_cast<s64>(load_le<u64>(d.data())) + delta);
      store_le<u64>(d.data(), used);
      bg_used_written_[start] = used;
      done = true;
      break;
    }
    if (!done) return make_error(Errc::corrupt, "no BLOCK_GROUP_ITEM for block group " + std::to_string(start));
  }
  return {};
}

Status Transaction::update_root_items() {
  for (auto& [id, r] : roots_) {
    // The root tree's and chunk tree's roots are in the superblock.
    if (id == ROOT_TREE_OBJECTID || id == CHUNK_TREE_OBJECTID) continue;
    auto last = root_items_written_.find(id);
    if (last != root_items_written_.end() && last->second == std::make_pair(r.bytenr, r.level)) continue;
    auto committed = fs_.find_root(id);
    if (last == root_items_written_.end() && committed && committed->bytenr == r.bytenr && committed->level == r.level) continue;
    // A tree created in this transaction has its item at (id, ROOT_ITEM, 0).
    Key key{id, KeyType::ROOT_ITEM, 0};
    for (auto& e : fs_.root_entries())
      if (e.key.objectid == id) key = e.key;
    FSCTL_TRY_ASSIGN(auto* rt, root(ROOT_TREE_OBJECTID));
    ctree::Path p;
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(*this, *rt, key, 0, p));
    if (!exact) return make_error(Errc::corrupt, "ROOT_ITEM of tree " + std::to_string(id) + " vanished");
    auto d = ctree::item_data_mut(*this, p);
    if (d.size() < ROOT_ITEM_V1_SIZE) return make_error(Errc::corrupt, "short ROOT_ITEM of tree " + std::to_string(id));
    store_le<u64>(d.data() + offsetof(RootItem, bytenr), r.bytenr);
    store_le<u64>(d.data() + offsetof(RootItem, generation), transid_);
    d[offsetof(RootItem, level)] = r.level;
    if (d.size() >= sizeof(RootItem)) store_le<u64>(d.data() + offsetof(RootItem, generation_v2), transid_);
    root_items_written_[id] = {r.bytenr, r.level};
    // The root tree itself may have been copied now: go round again.
    return update_root_items();
  }
  return {};
}

Result<ctree::WriteRoot*> Transaction::create_tree(u64 root_id) {
  if (roots_.count(root_id) || fs_.find_root(root_id))
    return make_error(Errc::invalid_argument, "tree " + std::to_string(root_id) + " already exists");
  FSCTL_TRY_ASSIGN(auto leaf, alloc_tree_block(root_id, 0));
  RootItem ri{};
  ri.bytenr.set(leaf->bytenr);
  ri.generation.set(transid_);
  ri.generation_v2.set(transid_);
  ri.level = 0;
  ri.refs.set(1);
  ri.bytes_used.set(nodesize());
  FSCTL_TRY_ASSIGN(auto* rt, root(ROOT_TREE_OBJECTID));
  FSCTL_TRY(ctree::insert_item(*this, *rt, Key{root_id, KeyType::ROOT_ITEM, 0},
                               std::span<const u8>(reinterpret_cast<const u8*>(&ri), sizeof ri)));
  auto& w = roots_[root_id];
  w = ctree::WriteRoot{root_id, leaf->bytenr, 0, transid_};
  root_items_written_[root_id] = {leaf->bytenr, 0};
  return &w;
}

Status Transaction::delete_tree(u64 root_id) {
  FSCTL_TRY_ASSIGN(auto* r, root(root_id));
  ctree::ParentCheck c;
  c.level = r->level;
  FSCTL_TRY_ASSIGN(auto blk, read_tree_block(r->bytenr, c));
  if (r->level != 0 || blk->view().nritems() != 0)
    return make_error(Errc::invalid_argument, "tree " + std::to_string(root_id) + " is not empty");
  FSCTL_TRY(free_tree_block(r->bytenr, root_id, 0));
  Key key{root_id, KeyType::ROOT_ITEM, 0};
  for (auto& e : fs_.root_entries())
    if (e.key.objectid == root_id) key = e.key;
  FSCTL_TRY_ASSIGN(auto* rt, root(ROOT_TREE_OBJECTID));
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(*this, *rt, key, 0, p));
  if (!exact) return make_error(Errc::corrupt, "ROOT_ITEM of tree " + std::to_string(root_id) + " vanished");
  FSCTL_TRY(ctree::delete_item(*this, *rt, p));
  roots_.erase(root_id);
  root_items_written_.erase(root_id);
  deleted_trees_.insert(root_id);
  return {};
}

}  // namespace fsctl::transaction
