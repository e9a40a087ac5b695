// SPDX-License-Identifier: GPL-2.0-only
// RootUpdates (root_updates.h): trees in use by a transaction, trees created
// and deleted, ROOT_ITEMs at commit.
#include "lib/transaction/root_updates.h"

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/root_item.h"
#include "lib/format/names.h"
#include "lib/fs/fs_info.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

namespace {

/// Puts `p` on the ROOT_ITEM of tree `id` in the root tree, for writing:
/// the key the open found (its offset is the snapshot's generation), or
/// (id, ROOT_ITEM, 0) for a tree created in this transaction. Errors:
/// Errc::corrupt when the item is gone; those of the search.
Status find_root_item_for_write(Transaction& t, u64 id, ctree::Path& p) {
  Key key{id, KeyType::ROOT_ITEM, 0};
  for (auto& e : t.fs().root_entries())
    if (e.key.objectid == id) key = e.key;
  FSCTL_TRY_ASSIGN(auto* rt, t.root(ROOT_TREE_OBJECTID));
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *rt, key, 0, p));
  if (!exact) return make_error(Errc::corrupt, "ROOT_ITEM of tree " + std::to_string(id) + " vanished");
  return {};
}

}  // namespace

Result<ctree::WriteRoot*> RootUpdates::root(const fs::FsInfo& fs, u64 root_id) {
  auto it = roots_.find(root_id);
  if (it != roots_.end()) return &it->second;
  if (deleted_.count(root_id)) return make_error(Errc::not_found, "tree " + tree_name(root_id) + " was deleted");
  auto r = fs.find_root(root_id);
  if (!r) return make_error(Errc::not_found, "tree " + tree_name(root_id) + " does not exist");
  ctree::WriteRoot w{root_id, r->bytenr, r->level, r->generation};
  return &roots_.emplace(root_id, w).first->second;
}

Status RootUpdates::apply(Transaction& t) {
  for (auto& [id, r] : roots_) {
    // The root tree's and chunk tree's roots are in the superblock.
    if (id == ROOT_TREE_OBJECTID || id == CHUNK_TREE_OBJECTID) continue;
    auto last = written_.find(id);
    if (last != written_.end() && last->second == std::make_pair(r.bytenr, r.level)) continue;
    auto committed = t.fs().find_root(id);
    if (last == written_.end() && committed && committed->bytenr == r.bytenr && committed->level == r.level) continue;
    ctree::Path p;
    FSCTL_TRY(find_root_item_for_write(t, id, p));
    auto d = ctree::item_data_mut(t, p);
    auto item = decode_root_item(d);
    if (!item) return make_error(item.error().context("ROOT_ITEM of tree " + std::to_string(id)));
    // The legacy form has no generation_v2 (decode leaves v2 false and
    // store_root_item does not write it).
    item->bytenr = r.bytenr;
    item->generation = t.transid();
    item->level = r.level;
    if (item->v2) item->generation_v2 = t.transid();
    FSCTL_TRY(store_root_item(d, *item));
    written_[id] = {r.bytenr, r.level};
    // The root tree itself may have been copied now: go round again.
    return apply(t);
  }
  return {};
}

Result<ctree::WriteRoot*> RootUpdates::create_tree(Transaction& t, u64 root_id) {
  if (roots_.count(root_id) || t.fs().find_root(root_id))
    return make_error(Errc::invalid_argument, "tree " + std::to_string(root_id) + " already exists");
  FSCTL_TRY_ASSIGN(auto leaf, t.alloc_tree_block(root_id, 0));
  // The full (v2) form, every field RootInfo does not carry zero.
  RootInfo ri;
  ri.bytenr = leaf->bytenr;
  ri.generation = t.transid();
  ri.generation_v2 = t.transid();
  ri.level = 0;
  ri.refs = 1;
  ri.bytes_used = t.nodesize();
  ri.v2 = true;
  FSCTL_TRY_ASSIGN(auto* rt, t.root(ROOT_TREE_OBJECTID));
  FSCTL_TRY(ctree::insert_item(t, *rt, Key{root_id, KeyType::ROOT_ITEM, 0}, encode_root_item(ri)));
  auto& w = roots_[root_id];
  w = ctree::WriteRoot{root_id, leaf->bytenr, 0, t.transid()};
  written_[root_id] = {leaf->bytenr, 0};
  return &w;
}

Status RootUpdates::delete_tree(Transaction& t, u64 root_id) {
  FSCTL_TRY_ASSIGN(auto* r, t.root(root_id));
  // Every block, top-down, before any is freed: a block that is not this
  // tree's alone stops the deletion with nothing freed (free_tree_block
  // checks each committed block's extent item: one TREE_BLOCK_REF of the
  // tree; a global tree is never shared).
  struct Pending {
    u64 bytenr;
    ctree::ParentCheck check;
  };
  std::vector<Pending> todo;
  ctree::ParentCheck c;
  c.level = r->level;
  todo.push_back({r->bytenr, c});
  std::vector<std::pair<u64, u8>> blocks;
  while (!todo.empty()) {
    Pending cur = todo.back();
    todo.pop_back();
    FSCTL_TRY_ASSIGN(auto blk, t.read_tree_block(cur.bytenr, cur.check));
    auto v = blk->view();
    if (v.owner() != root_id)
      return make_error(Errc::unsupported, "tree block " + std::to_string(cur.bytenr) + " of tree " + tree_name(root_id) +
                                               " has owner " + std::to_string(v.owner()) + ": shared trees are not deleted this way");
    blocks.emplace_back(cur.bytenr, v.level());
    if (v.is_leaf()) continue;
    for (u32 s = 0; s < v.nritems(); ++s) {
      ctree::ParentCheck cc;
      cc.level = v.level() - 1;
      cc.transid = v.ptr_generation(s);
      cc.first_key = v.node_key(s);
      todo.push_back({v.blockptr(s), cc});
    }
  }
  for (auto& [bytenr, level] : blocks) FSCTL_TRY(t.free_tree_block(bytenr, root_id, level));
  ctree::Path p;
  FSCTL_TRY(find_root_item_for_write(t, root_id, p));
  FSCTL_TRY_ASSIGN(auto* rt, t.root(ROOT_TREE_OBJECTID));
  FSCTL_TRY(ctree::delete_item(t, *rt, p));
  roots_.erase(root_id);
  written_.erase(root_id);
  deleted_.insert(root_id);
  return {};
}

}  // namespace fsctl::transaction
