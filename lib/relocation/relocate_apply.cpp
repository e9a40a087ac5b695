// SPDX-License-Identifier: GPL-2.0-only
// The apply of a relocation (relocate.h; DESIGN.md "Relocation for `balance
// -m`"): performs a plan (relocate_plan.cpp) in one transaction, step by
// step: copies of subvolume-tree blocks through the old -> new bytenr memo,
// ROOT_ITEMs, extent items, full backrefs (block_backrefs.h), then the
// global trees by path copy-on-write (global_trees.h). Every block keeps its
// set of referencing roots (invariant 7).
#include "lib/relocation/relocate.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "lib/base/phase_timer.h"
#include "lib/ctree/search.h"
#include "lib/ctree/tree_block_extent.h"
#include "lib/ctree/write.h"
#include "lib/format/extent_item.h"
#include "lib/format/file_extent.h"
#include "lib/format/names.h"
#include "lib/format/root_item.h"
#include "lib/format/tree_header.h"
#include "lib/relocation/block_backrefs.h"
#include "lib/relocation/global_trees.h"

namespace fsctl::relocation {
using namespace fsctl::format;
using transaction::Transaction;

namespace {

std::string block_name(u64 bytenr) { return "tree block " + std::to_string(bytenr); }

// The copy of `parent` that a full backref of copied block `child` names
// from now on (every parent of a copied block is copied too).
Result<u64> remapped_parent(const std::unordered_map<u64, u64>& memo, u64 child, u64 parent, RelocationStats& st) {
  auto it = memo.find(parent);
  if (it == memo.end())
    return make_error(Errc::corrupt, block_name(child) + " has a full backref to parent " + std::to_string(parent) +
                                         ", which no subvolume tree path leads through");
  st.backrefs_remapped++;
  return it->second;
}

// The keys of the keyed backrefs (TREE_BLOCK_REF, SHARED_BLOCK_REF) that
// follow the extent item of tree block `old` at `p`.
Result<std::vector<Key>> keyed_block_backrefs(Transaction& t, const ctree::Path& p, u64 old) {
  std::vector<Key> keyed;
  ctree::Path q = p;
  while (true) {
    FSCTL_TRY_ASSIGN(bool more, ctree::next_item(t, q));
    if (!more) break;
    Key qk = q.key();
    if (qk.objectid != old) break;
    if (qk.type == KeyType::TREE_BLOCK_REF || qk.type == KeyType::SHARED_BLOCK_REF) keyed.push_back(qk);
  }
  return keyed;
}

// Step 4 for one copied block `old` (now at `nb_bytenr`): its extent item and
// keyed backrefs deleted and inserted again under the new bytenr, same refs,
// flags and generation, SHARED_BLOCK_REF parents remapped. Adds `old` to
// `full_backref` when its item has FULL_BACKREF.
Status move_extent_item(Transaction& t, ctree::WriteRoot& ext, u64 old, u64 nb_bytenr, u8 level, const std::unordered_map<u64, u64>& memo,
                        RelocationStats& st, std::set<u64>& full_backref) {
  ctree::Path p;
  FSCTL_TRY_ASSIGN(auto found, ctree::find_tree_block_extent_for_write(t, ext, old, level, p));
  if (!found) return make_error(Errc::corrupt, block_name(old) + " has no extent item in the extent tree");
  Key k = *found;
  FSCTL_TRY_ASSIGN(auto rec, with_context(decode_extent_item(k, p.item_data()), "extent item " + key_to_string(k)));
  FSCTL_TRY_ASSIGN(std::vector<Key> keyed, keyed_block_backrefs(t, p, old));
  {
    u64 backrefs = keyed.size() + inline_block_backrefs(rec);
    if (rec.refs != backrefs)
      return make_error(Errc::corrupt, block_name(old) + ": its extent item says refs " + std::to_string(rec.refs) + " but has " +
                                           std::to_string(backrefs) + " backrefs: the extent tree is damaged (run btrfs check)");
  }
  if (rec.flags & BLOCK_FLAG_FULL_BACKREF) full_backref.insert(old);
  FSCTL_TRY(ctree::delete_item(t, ext, p));
  for (const Key& kk : keyed) {
    ctree::Path q;
    FSCTL_TRY_ASSIGN(bool found, ctree::search_slot_for_write(t, ext, kk, 0, q));
    if (!found) return make_error(Errc::corrupt, "keyed backref " + key_to_string(kk) + " vanished");
    FSCTL_TRY(ctree::delete_item(t, ext, q));
  }
  for (auto& r : rec.inline_refs) {
    if (r.type != KeyType::SHARED_BLOCK_REF) continue;
    FSCTL_TRY_ASSIGN(r.parent, remapped_parent(memo, old, r.parent, st));
  }
  sort_inline_refs(rec.inline_refs);
  // The item keeps its form: (new, METADATA_ITEM, level), or the old
  // (new, EXTENT_ITEM, nodesize) with its btrfs_tree_block_info (the copy
  // has the original's first key and level).
  FSCTL_TRY(ctree::insert_item(t, ext, Key{nb_bytenr, k.type, k.offset}, encode_extent_item(rec)));
  for (const Key& kk : keyed) {
    Key nk{nb_bytenr, kk.type, kk.offset};
    if (kk.type == KeyType::SHARED_BLOCK_REF) {
      FSCTL_TRY_ASSIGN(nk.offset, remapped_parent(memo, old, kk.offset, st));
    }
    FSCTL_TRY(ctree::insert_item(t, ext, nk, {}));
  }
  return {};
}

}  // namespace

Status RelocationPlan::apply(Transaction& t, RelocationStats& st, const MovedFn& moved) {
  t.exclude_block_groups(bgs_);
  fs::FsInfo& fs = t.fs();

  PhaseTimer timer(fs.phase_sink());
  Memo memo;
  FSCTL_TRY(copy_subvolume_blocks(t, memo, moved));
  st.tree_blocks_copied += memo.size();
  for (auto& [b, nb] : memo)
    if (!targets_.count(b)) st.ancestors_copied++;
  timer.mark("1-2 copies made, pointers remapped");
  FSCTL_TRY(update_root_items(t, memo));
  timer.mark("3 root items");
  std::set<u64> full_backref;  // originals whose extent item has FULL_BACKREF
  FSCTL_TRY(move_extent_items(t, memo, st, full_backref));
  timer.mark("4 extent items moved");
  FSCTL_TRY(remap_full_backrefs(t, memo, full_backref, st));
  timer.mark("5 full backrefs remapped");
  FSCTL_TRY(cow_global_trees(t));
  st.tree_blocks_copied += global_found_.size();  // found by make(), before anything changed
  if (moved && !global_found_.empty()) moved(global_found_.size());
  timer.mark("6 global trees copied");
  FSCTL_TRY(check_targets_reached(fs, memo));
  st.relocated_extents += targets_.size();
  return {};
}

// 1. Copy every subvolume-tree block to move, level by level from the
// leaves up, streaming each level's originals in physical order. A copy is
// the original with a new header bytenr and, in a node, its pointers to
// copied children (all made by the lower levels) remapped. No copy is held
// afterwards: the transaction may write it back before the commit
// (bounded writeback), and steps 4-5 need only `memo`.
Status RelocationPlan::copy_subvolume_blocks(Transaction& t, Memo& memo, const MovedFn& moved) {
  u32 ns = t.nodesize();
  std::map<u8, std::vector<ctree::BlockRequest>> by_level;
  for (auto& [b, level] : copy_) by_level[level].push_back({b, checks_.at(b)});
  for (auto& [level, req] : by_level) {
    std::sort(req.begin(), req.end(), [](const auto& x, const auto& y) { return x.bytenr < y.bytenr; });
    FSCTL_TRY(t.read_tree_blocks(std::move(req), [&](const cache::TreeBlockRef& b) -> Status {
      NodeView v = b->view();
      FSCTL_TRY_ASSIGN(auto nb, t.alloc_block_space(v.owner(), v.level()));
      std::memcpy(nb->data.data(), b->data.data(), ns);
      set_header_bytenr(nb->data, nb->bytenr);
      if (v.level() > 0) {
        NodeMut m(nb->data, ns);
        for (u32 i = 0; i < m.nritems(); ++i) {
          auto it = memo.find(m.view().blockptr(i));
          if (it != memo.end()) m.key_ptr(i).blockptr.set(it->second);
        }
      }
      memo[b->bytenr] = nb->bytenr;
      if (moved && targets_.count(b->bytenr)) moved(1);
      return t.release_block_space(b->bytenr);
    }));
  }
  return {};
}

// 3. Root items point at copied roots (generation unchanged: the copy
// carries the original's header generation).
Status RelocationPlan::update_root_items(Transaction& t, const Memo& memo) {
  FSCTL_TRY_ASSIGN(auto* rt, t.root(ROOT_TREE_OBJECTID));
  for (auto& [bytenr, key] : root_items_) {
    auto it = memo.find(bytenr);
    if (it == memo.end()) continue;
    ctree::Path p;
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *rt, key, 0, p));
    if (!exact) return make_error(Errc::corrupt, "ROOT_ITEM " + key_to_string(key) + " vanished");
    auto d = ctree::item_data_mut(t, p);
    FSCTL_TRY_ASSIGN(RootInfo ri, with_context(decode_root_item(d), "ROOT_ITEM " + key_to_string(key)));
    ri.bytenr = it->second;
    FSCTL_TRY(store_root_item(d, ri));
  }
  return {};
}

// 4. Extent items move with their blocks: same refs, flags, generation and
// backrefs, SHARED_BLOCK_REF parents remapped (every parent of a copied
// block is copied too).
Status RelocationPlan::move_extent_items(Transaction& t, const Memo& memo, RelocationStats& st, std::set<u64>& full_backref) {
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  // In extent-tree order: each leaf of the extent tree is copied once.
  std::vector<std::pair<u64, u64>> moves(memo.begin(), memo.end());
  std::sort(moves.begin(), moves.end());
  for (auto& [old, nb_bytenr] : moves) FSCTL_TRY(move_extent_item(t, *ext, old, nb_bytenr, copy_.at(old), memo, st, full_backref));
  return {};
}

// 5. What a FULL_BACKREF block references by its bytenr follows it: its
// children's SHARED_BLOCK_REFs (those not copied themselves: a copied
// child's backref was remapped in step 4) and, for a leaf, the
// SHARED_DATA_REFs of the data extents its file extent items point at.
// A leaf's items are read from the original, which is pinned until the
// commit (its copy has the same items and may be written back already).
Status RelocationPlan::remap_full_backrefs(Transaction& t, const Memo& memo, const std::set<u64>& full_backref, RelocationStats& st) {
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  // Remaps gathered in a buffer of a 32nd of the budget (the planning
  // budget: a rehearsal takes the same steps), then applied in extent-tree
  // order, every relocated parent of an extent at once. An extent whose
  // remaps straddle two buffers is rewritten twice, each time for other
  // parents. (All at once, in a map: 57 MB at 1,600 snapshots.)
  struct Remap {
    Key extent;
    u64 old_parent, new_parent;
    u8 type;
  };
  std::vector<Remap> remaps;
  const std::size_t max_remaps = std::max<std::size_t>(4096, t.fs().planning_cache_budget() / 32 / sizeof(Remap));
  std::vector<std::pair<u64, u64>> parents;
  auto apply_remaps = [&]() -> Status {
    std::sort(remaps.begin(), remaps.end(), [](const Remap& a, const Remap& b) {
      return a.extent != b.extent ? a.extent < b.extent : a.old_parent < b.old_parent;
    });
    for (std::size_t i = 0; i < remaps.size();) {
      std::size_t j = i;
      parents.clear();
      for (; j < remaps.size() && remaps[j].extent == remaps[i].extent; ++j)
        if (parents.empty() || parents.back().first != remaps[j].old_parent) parents.emplace_back(remaps[j].old_parent, remaps[j].new_parent);
      FSCTL_TRY(remap_full_backrefs_of(t, *ext, remaps[i].extent, remaps[i].type, parents));
      st.backrefs_remapped += parents.size();
      i = j;
    }
    remaps.clear();
    return {};
  };
  auto add_remap = [&](const Key& extent, u64 old_parent, u8 type) -> Status {
    remaps.push_back({extent, old_parent, memo.at(old_parent), type});
    return remaps.size() >= max_remaps ? apply_remaps() : Status{};
  };
  std::vector<ctree::BlockRequest> fb_leaves;
  for (u64 old : full_backref) {
    u8 level = copy_.at(old);
    if (level == 0) {
      fb_leaves.push_back({old, checks_.at(old)});
      continue;
    }
    for (u64 c : nodes_.at(old).children) {
      if (memo.count(c)) continue;
      ctree::Path cp;
      FSCTL_TRY_ASSIGN(auto ck, ctree::find_tree_block_extent(t, ext->ref(), c, static_cast<u8>(level - 1), t.nodesize(), cp));
      if (!ck)
        return make_error(Errc::corrupt, block_name(c) + ", a child of relocated " + block_name(old) + ", has no extent item");
      cp.release();
      FSCTL_TRY(add_remap(*ck, old, KeyType::SHARED_BLOCK_REF));
    }
  }
  FSCTL_TRY(t.read_tree_blocks(std::move(fb_leaves), [&](const cache::TreeBlockRef& b) -> Status {
    NodeView v = b->view();
    for (u32 i = 0; i < v.nritems(); ++i) {
      if (v.item_type_at(i) != KeyType::EXTENT_DATA) continue;
      // A short or inconsistent item is corruption here as everywhere: its
      // data extent (if any) would keep a SHARED_DATA_REF to the old leaf.
      auto fe = decode_file_extent(v.item_data(i));
      if (!fe)
        return make_error(fe.error().context("tree block " + std::to_string(b->bytenr) + " slot " + std::to_string(i)));
      if (!fe->has_data_extent()) continue;  // inline or a hole: no data extent
      FSCTL_TRY(add_remap(Key{fe->disk_bytenr, KeyType::EXTENT_ITEM, fe->disk_num_bytes}, b->bytenr, KeyType::SHARED_DATA_REF));
    }
    return {};
  }));
  FSCTL_TRY(apply_remaps());
  return {};
}

// 6. Global trees: copy-on-write of the path to each of their blocks in a
// target (the allocator no longer uses the targets, so the copies land
// elsewhere). Repeated until a walk finds none: the commit's own changes
// only copy paths into non-target space. (Steps 3-5 may already have
// copied some of them: global_found_, from before step 1, has them all.)
Status RelocationPlan::cow_global_trees(Transaction& t) {
  fs::FsInfo& fs = t.fs();
  auto in_target = [&](u64 bytenr) { return this->in_target(fs, bytenr); };
  for (u64 id : GLOBAL_TREES) {
    if (id != ROOT_TREE_OBJECTID && !fs.find_root(id)) continue;
    for (int round = 0;; ++round) {
      if (round > 16) return make_error(Errc::aborted, "tree " + tree_name(id) + " still has blocks in the relocated block groups");
      FSCTL_TRY_ASSIGN(auto* r, t.root(id));
      std::set<u64> found;
      FSCTL_TRY_ASSIGN(auto keys, find_target_paths(t, *r, in_target, found));
      if (keys.empty()) break;
      // The paths' blocks in batched reads first, not one read per level
      // and key in the searches.
      std::vector<Key> sorted = keys;
      std::sort(sorted.begin(), sorted.end());
      ctree::prefetch_search_paths(t, r->ref(), sorted);
      for (const Key& k : keys) {
        ctree::Path p;
        FSCTL_TRY(ctree::search_slot_for_write(t, *r, k, 0, p));
      }
    }
  }
  return {};
}

// Every tree block of the targets must have been reached by some tree.
Status RelocationPlan::check_targets_reached(const fs::FsInfo& fs, const Memo& memo) const {
  // The lowest such block is named, whatever the hash order.
  std::optional<std::pair<u64, u8>> lost;
  for (auto& [b, level] : targets_)
    if (!memo.count(b) && !global_found_.count(b) && (!lost || b < lost->first)) lost = {b, level};
  if (lost) {
    auto [b, level] = *lost;
    return make_error(Errc::corrupt, block_name(b) + " (level " + std::to_string(level) + ") in block group " +
                                         std::to_string(fs.block_group_of(b) ? fs.block_group_of(b)->start : 0) +
                                         " has an extent item but no tree reaches it (a leaked extent: run btrfs check); nothing was written");
  }
  return {};
}

}  // namespace fsctl::relocation
