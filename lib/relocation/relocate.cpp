// SPDX-License-Identifier: GPL-2.0-only
// Sharing-preserving relocation of tree blocks (relocate.h; DESIGN.md
// "Balance"). Backref facts from the kernel's extent-tree.c / ctree.c
// (update_ref_for_cow, btrfs_inc_ref with full_backref): a block whose extent
// item has BLOCK_FLAG_FULL_BACKREF is referenced by its children (and, for a
// leaf, by its data extents) through SHARED_BLOCK_REF / SHARED_DATA_REF keyed
// by its own bytenr; otherwise they reference their root (TREE_BLOCK_REF /
// EXTENT_DATA_REF), which relocation does not change.
#include "lib/relocation/relocate.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "lib/base/phase_timer.h"
#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/ctree/block_group_lookup.h"
#include "lib/format/extent_backref.h"
#include "lib/format/extent_item.h"
#include "lib/format/file_extent.h"
#include "lib/format/items.h"
#include "lib/format/names.h"
#include "lib/format/root_item.h"
#include "lib/format/tree_header.h"

namespace fsctl::relocation {
using namespace fsctl::format;
using transaction::Transaction;

namespace {

/// Trees the kernel reference-counts (BTRFS_ROOT_SHAREABLE): subvolumes,
/// snapshots and the data relocation tree.
bool is_shareable(u64 id) { return is_fstree(id) || id == DATA_RELOC_TREE_OBJECTID; }

/// Global trees moved by ordinary copy-on-write (never shared). The chunk
/// tree lives in SYSTEM block groups (the allocator places its copies in
/// other system groups); it is listed last so that chunk items changed by
/// the other trees' work are in place when it is walked.
constexpr u64 GLOBAL_TREES[] = {ROOT_TREE_OBJECTID,      EXTENT_TREE_OBJECTID,      DEV_TREE_OBJECTID,
                                CSUM_TREE_OBJECTID,      QUOTA_TREE_OBJECTID,       UUID_TREE_OBJECTID,
                                FREE_SPACE_TREE_OBJECTID, BLOCK_GROUP_TREE_OBJECTID, RAID_STRIPE_TREE_OBJECTID,
                                CHUNK_TREE_OBJECTID};

std::string block_name(u64 bytenr) { return "tree block " + std::to_string(bytenr); }

// The inline backrefs of a tree block's extent item, each one of its refs
// (TREE_BLOCK_REF, SHARED_BLOCK_REF; not the simple-quota owner ref).
u64 inline_block_backrefs(const ExtentRecord& rec) {
  return static_cast<u64>(std::count_if(rec.inline_refs.begin(), rec.inline_refs.end(), [](const ExtentRef& r) {
    return r.type == KeyType::TREE_BLOCK_REF || r.type == KeyType::SHARED_BLOCK_REF;
  }));
}

// The full backref of type `type` (SHARED_BLOCK_REF or SHARED_DATA_REF) of
// extent `key` that names `old_parent` now names `new_parent`: inline (the
// refs re-sorted, the item rewritten in place: same size) or keyed (deleted
// and inserted with the new parent as key offset, same data).
Status remap_full_backref(Transaction& t, ctree::WriteRoot& ext, const Key& key, u8 type, u64 old_parent, u64 new_parent) {
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, ext, key, 0, p));
  if (!exact) return make_error(Errc::corrupt, "no extent item " + key_to_string(key) + " for a block relocated from " + std::to_string(old_parent));
  FSCTL_TRY_ASSIGN(auto rec, decode_extent_item(key, p.item_data()));
  for (auto& r : rec.inline_refs) {
    if (r.type != type || r.parent != old_parent) continue;
    r.parent = new_parent;
    sort_inline_refs(rec.inline_refs);
    // Same refs, one parent changed: the item keeps its size.
    return with_context(store_extent_item(ctree::item_data_mut(t, p), rec), "extent item " + key_to_string(key));
  }
  Key keyed{key.objectid, type, old_parent};
  ctree::Path q;
  FSCTL_TRY_ASSIGN(bool found, ctree::search_slot_for_write(t, ext, keyed, 0, q));
  if (!found)
    return make_error(Errc::corrupt, "extent " + key_to_string(key) + " has no " + key_type_name(type) + " to parent " +
                                         std::to_string(old_parent) + ", whose extent item says FULL_BACKREF");
  FSCTL_TRY_ASSIGN(ExtentRef ref, with_context(decode_keyed_backref(keyed, q.item_data()), "extent tree"));
  ref.parent = new_parent;
  KeyedBackrefItem moved = encode_keyed_backref(key.objectid, ref);
  FSCTL_TRY(ctree::delete_item(t, ext, q));
  return ctree::insert_item(t, ext, moved.key, moved.data);
}

// Search keys whose copy-on-write paths pass through every block of tree
// `r` that `in_target` selects (the root: any key; another block: its key in
// the parent). Reads the tree's nodes level by level, not its leaves; adds
// the selected bytenrs to `found`.
Result<std::vector<Key>> find_target_paths(Transaction& t, const ctree::WriteRoot& r, const std::function<bool(u64)>& in_target,
                                           std::set<u64>& found) {
  std::vector<Key> keys;
  if (in_target(r.bytenr)) {
    found.insert(r.bytenr);
    keys.push_back(KEY_MIN);
  }
  std::vector<ctree::BlockRequest> level;
  ctree::ParentCheck rc;
  rc.transid = r.generation;
  rc.level = r.level;
  if (r.level > 0) level.push_back({r.bytenr, rc});
  while (!level.empty()) {
    std::vector<ctree::BlockRequest> next;
    FSCTL_TRY(t.read_tree_blocks(level, [&](const cache::TreeBlockRef& b) -> Status {
      NodeView v = b->view();
      for (u32 i = 0; i < v.nritems(); ++i) {
        if (in_target(v.blockptr(i))) {
          keys.push_back(v.node_key(i));
          found.insert(v.blockptr(i));
        }
        if (v.level() > 1) next.push_back({v.blockptr(i), ctree::child_check(v, i)});
      }
      return {};
    }));
    level = std::move(next);
  }
  return keys;
}

}  // namespace

Result<u64> committed_block_group_used(fs::FsInfo& fs, u64 start) {
  const fs::BlockGroup* bg = fs.block_group_of(start);
  if (!bg || bg->start != start) return make_error(Errc::corrupt, "no block group starts at " + std::to_string(start));
  FSCTL_TRY_ASSIGN(auto found, ctree::find_block_group_item(fs, fs.block_group_trees(), start, bg->length));
  if (!found) return make_error(Errc::corrupt, "block group " + std::to_string(start) + " has no BLOCK_GROUP_ITEM; nothing was written");
  return found->item.used;
}

// Long: the plan's five steps in sequence; split into relocate_plan.cpp with
// named steps on branch `concepts` (issue 11 part 6, not merged yet).
Result<RelocationPlan> RelocationPlan::make(Transaction& t, const std::set<u64>& targets) {
  RelocationPlan p;
  p.bgs_ = targets;
  fs::FsInfo& fs = t.fs();
  p.root_height_ = static_cast<u8>(fs.super().root_level + 1);
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  // Per target: refs of its METADATA_ITEM and the backrefs found (inline and
  // keyed), which must agree before anything is copied.
  struct RefCount {
    u64 refs = 0, backrefs = 0, leaf = 0;
  };
  std::map<u64, RefCount> counts;
  for (u64 start : targets) {
    const fs::BlockGroup* bg = fs.block_group_of(start);
    if (!bg || bg->start != start) return make_error(Errc::invalid_argument, "no block group starts at " + std::to_string(start));
    ctree::KeyRange range{{bg->start, 0, 0}, {bg->start + bg->length - 1, 0xff, ~0ULL}};
    FSCTL_TRY(ctree::for_each_item(t, ext->ref(), range, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
      Key k = leaf.item_key(slot);
      if (k.type == KeyType::METADATA_ITEM) {
        p.targets_[k.objectid] = static_cast<u8>(k.offset);
        auto rec = decode_extent_item(k, leaf.item_data(slot));
        if (!rec)
          return make_error(rec.error().context("extent item " + key_to_string(k) + " in extent tree leaf " + std::to_string(leaf.bytenr())));
        ExtentShape& es = p.target_extents_[k.objectid];
        es.item_bytes = static_cast<u32>(sizeof(Item) + leaf.item_data(slot).size());
        es.full_backref = rec->flags & BLOCK_FLAG_FULL_BACKREF;
        RefCount& c = counts[k.objectid];
        c.refs = rec->refs;
        c.leaf = leaf.bytenr();
        c.backrefs += inline_block_backrefs(*rec);
      } else if (k.type == KeyType::TREE_BLOCK_REF || k.type == KeyType::SHARED_BLOCK_REF) {
        counts[k.objectid].backrefs++;
        p.target_extents_[k.objectid].keyed++;
      } else if (k.type == KeyType::EXTENT_ITEM) {
        return make_error(Errc::unsupported, "extent item " + key_to_string(k) + " (extent tree leaf " + std::to_string(leaf.bytenr()) +
                                                 ") in block group " + std::to_string(start) +
                                                 ": data extents or non-skinny tree block extents are not relocated by fsctl");
      }
      return ctree::Visit::next;
    }));
  }
  // A tree block's refs count its backrefs (kernel: one per
  // TREE_BLOCK_REF/SHARED_BLOCK_REF; btrfs check "refs mismatch"); copying a
  // wrong count would carry the damage on (test 184).
  for (auto& [bytenr, c] : counts)
    if (p.targets_.count(bytenr) && c.refs != c.backrefs)
      return make_error(Errc::corrupt, "tree block " + std::to_string(bytenr) + ": its METADATA_ITEM (extent tree leaf " +
                                           std::to_string(c.leaf) + ") says refs " + std::to_string(c.refs) + " but has " +
                                           std::to_string(c.backrefs) + " backrefs: the extent tree is damaged (run btrfs check); nothing was written");

  // The nodes of every subvolume tree, level by level, each read once (a
  // node shared by snapshots is reached through several parents). Leaves
  // are not read: whether a leaf is in a target follows from its bytenr.
  std::vector<ctree::BlockRequest> frontier;
  std::set<u64> seen;
  for (const auto& e : fs.root_entries()) {
    u64 id = e.key.objectid;
    if (!is_shareable(id)) continue;
    if (e.item.refs == 0)
      return make_error(Errc::unsupported, "subvolume " + std::to_string(id) +
                                               " is being deleted (ROOT_ITEM refs 0): mount the filesystem and wait for `btrfs subvolume sync` before balancing");
    ctree::ParentCheck c;
    c.transid = e.item.generation;
    c.level = e.item.level;
    p.root_items_.emplace_back(e.item.bytenr, e.key);
    if (!seen.insert(e.item.bytenr).second) continue;
    p.checks_[e.item.bytenr] = c;
    if (e.item.level > 0) frontier.push_back({e.item.bytenr, c});
  }
  auto in_target = [&](u64 bytenr) { return p.in_target(fs, bytenr); };
  // A block a tree reaches inside a target must have its extent item, or
  // it would be left behind in a block group about to be removed.
  auto must_be_target = [&](u64 bytenr, u64 tree) -> Status {
    if (!in_target(bytenr) || p.targets_.count(bytenr)) return {};
    return make_error(Errc::corrupt, "tree block " + std::to_string(bytenr) + " of tree " + tree_name(tree) + " lies in block group " +
                                         std::to_string(fs.block_group_of(bytenr)->start) +
                                         " but has no METADATA_ITEM in the extent tree (run btrfs check); nothing was written");
  };
  for (auto& [bytenr, key] : p.root_items_) FSCTL_TRY(must_be_target(bytenr, key.objectid));
  while (!frontier.empty()) {
    std::vector<ctree::BlockRequest> next;
    FSCTL_TRY(t.read_tree_blocks(frontier, [&](const cache::TreeBlockRef& b) -> Status {
      NodeView v = b->view();
      for (u32 i = 0; i < v.nritems(); ++i) FSCTL_TRY(must_be_target(v.blockptr(i), v.owner()));
      Node& n = p.nodes_[b->bytenr];
      n.level = v.level();
      n.children.reserve(v.nritems());
      for (u32 i = 0; i < v.nritems(); ++i) {
        u64 c = v.blockptr(i);
        n.children.push_back(c);
        if (!seen.insert(c).second) continue;
        if (v.level() > 1 || p.targets_.count(c)) p.checks_[c] = ctree::child_check(v, i);
        if (v.level() > 1) next.push_back({c, ctree::child_check(v, i)});
      }
      return {};
    }));
    frontier = std::move(next);
  }

  // What to copy: the targets reached from subvolume roots and every node
  // above one (bottom-up over the levels).
  std::vector<std::pair<u8, u64>> order;
  for (const auto& [b, n] : p.nodes_) order.emplace_back(n.level, b);
  std::sort(order.begin(), order.end());
  for (auto [level, b] : order) {
    bool need = p.targets_.count(b) > 0;
    for (u64 c : p.nodes_[b].children) {
      if (level == 1 && p.targets_.count(c)) {
        p.copy_[c] = 0;
        need = true;
      } else if (level > 1 && p.copy_.count(c)) {
        need = true;
      }
    }
    if (need) p.copy_[b] = level;
  }
  for (auto& [bytenr, key] : p.root_items_)
    if (!p.nodes_.count(bytenr) && p.targets_.count(bytenr)) p.copy_[bytenr] = 0;  // a root that is a leaf

  // The global trees' blocks in the targets (nodes read, not leaves), each
  // with its extent item.
  for (u64 id : GLOBAL_TREES) {
    if (id != ROOT_TREE_OBJECTID && !fs.find_root(id)) continue;
    FSCTL_TRY_ASSIGN(auto* r, t.root(id));
    std::set<u64> found;
    FSCTL_TRY(find_target_paths(t, *r, in_target, found));
    for (u64 b : found) FSCTL_TRY(must_be_target(b, id));
    p.global_found_.insert(found.begin(), found.end());
  }

  // Each target's `used` must be the bytes of its tree blocks: otherwise
  // the group would not be empty after relocation (and could never be
  // removed), found only after a commit.
  std::map<u64, u64> sum;
  for (auto& [b, level] : p.targets_) sum[fs.block_group_of(b)->start] += fs.nodesize();
  for (u64 start : targets) {
    FSCTL_TRY_ASSIGN(u64 used, committed_block_group_used(fs, start));
    if (used != sum[start])
      return make_error(Errc::corrupt, "block group " + std::to_string(start) + ": its item says " + std::to_string(used) +
                                           " bytes used, its tree blocks' extent items add up to " + std::to_string(sum[start]) +
                                           " (run btrfs check); nothing was written");
  }
  return p;
}

bool RelocationPlan::in_target(const fs::FsInfo& fs, u64 bytenr) const {
  const fs::BlockGroup* bg = fs.block_group_of(bytenr);
  return bg && bgs_.count(bg->start) > 0;
}

transaction::Reservation RelocationPlan::reservation(u32 nodesize) const {
  transaction::Reservation r;
  u64 subvol_targets = 0;
  for (auto& [b, level] : copy_)
    if (targets_.count(b)) ++subvol_targets;
  u64 global_targets = targets_.size() - subvol_targets;
  // Copies, and the paths of the global trees' blocks (copy-on-write of a
  // path to each: at most the tallest tree's height, 8 levels).
  r.exact_blocks = copy_.size();
  r.extra_blocks = global_targets * 2;
  // Extent tree: per copy one extent item deleted and one inserted, and the
  // full backrefs of its children and data extents updated (at most one per
  // child pointer or file extent item of a leaf: bounded by the slots).
  u64 leaf_slots = leaf_data_size(nodesize) / (sizeof(Item) + FILE_EXTENT_ITEM_SIZE);
  bool all_targets = std::all_of(copy_.begin(), copy_.end(), [&](const auto& c) { return target_extents_.count(c.first); });
  if (!all_targets) {
    // Ancestors outside the targets: their extent items were not read, so
    // every copy counts as one that may need a leaf of its own and may have
    // full backrefs to remap, in the extent tree and the root tree alike.
    r.items_inserted = copy_.size();
    r.items_deleted = copy_.size();
    r.items_updated = copy_.size() * std::max<u64>(leaf_slots, node_max_ptrs(nodesize)) + root_items_.size();
    r.trees = {EXTENT_TREE_OBJECTID, ROOT_TREE_OBJECTID};
    r.trees_touched = 2;
    return r;
  }
  // Every copy is a target, whose extent item the plan read: the extent tree
  // gets exactly its item and keyed backrefs deleted and inserted again (same
  // bytes), and, for a FULL_BACKREF block, at most one keyed backref per
  // child pointer or file extent item moved (a SHARED_*_REF item, 29 bytes
  // with its header). The root tree only has ROOT_ITEMs rewritten in place:
  // a path each (extra_blocks).
  for (auto& [b, level] : copy_) {
    const ExtentShape& e = target_extents_.at(b);
    u64 n = 1 + e.keyed;
    r.items_inserted += n;
    r.items_deleted += n;
    r.insert_bytes += e.item_bytes + u64{e.keyed} * sizeof(Item);
    if (e.full_backref) {
      u64 slots = level == 0 ? leaf_slots : node_max_ptrs(nodesize);
      r.items_inserted += slots;
      r.items_deleted += slots;
      r.items_updated += slots;
      r.insert_bytes += slots * (sizeof(Item) + 4);
    }
  }
  r.extra_blocks += root_items_.size() * root_height_;
  r.trees = {EXTENT_TREE_OBJECTID};
  r.trees_touched = 2;
  return r;
}

// Long: the apply's six steps in sequence; split into relocate_apply.cpp with
// named steps on branch `concepts` (issue 11 part 6, not merged yet).
Status RelocationPlan::apply(Transaction& t, RelocationStats& st) {
  t.exclude_block_groups(bgs_);
  fs::FsInfo& fs = t.fs();
  u32 ns = t.nodesize();
  auto in_target = [&](u64 bytenr) { return this->in_target(fs, bytenr); };

  PhaseTimer timer(fs.phase_sink());
  const std::set<u64>& global_found = global_found_;  // found by make(), before anything changed

  // 1. Copy every subvolume-tree block to move, level by level from the
  // leaves up, streaming each level's originals in physical order. A copy is
  // the original with a new header bytenr and, in a node, its pointers to
  // copied children (all made by the lower levels) remapped. No copy is held
  // afterwards: the transaction may write it back before the commit
  // (bounded writeback), and steps 4-5 need only `memo`.
  std::map<u64, u64> memo;
  std::map<u8, std::vector<ctree::BlockRequest>> by_level;
  for (auto& [b, level] : copy_) by_level[level].push_back({b, checks_.at(b)});
  for (auto& [level, req] : by_level) {
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
      return t.release_block_space(b->bytenr);
    }));
  }
  st.tree_blocks_copied += memo.size();
  for (auto& [b, nb] : memo)
    if (!targets_.count(b)) st.ancestors_copied++;

  timer.mark("1-2 copies made, pointers remapped");
  // 3. Root items point at copied roots (generation unchanged: the copy
  // carries the original's header generation).
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

  timer.mark("3 root items");
  // 4. Extent items move with their blocks: same refs, flags, generation and
  // backrefs, SHARED_BLOCK_REF parents remapped (every parent of a copied
  // block is copied too).
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  std::set<u64> full_backref;  // originals whose extent item has FULL_BACKREF
  auto remap_parent = [&](u64 child, u64 parent) -> Result<u64> {
    auto it = memo.find(parent);
    if (it == memo.end())
      return make_error(Errc::corrupt, block_name(child) + " has a full backref to parent " + std::to_string(parent) +
                                           ", which no subvolume tree path leads through");
    st.backrefs_remapped++;
    return it->second;
  };
  for (auto& [old, nb_bytenr] : memo) {
    u8 level = copy_.at(old);
    Key k{old, KeyType::METADATA_ITEM, level};
    ctree::Path p;
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *ext, k, 0, p));
    if (!exact) return make_error(Errc::corrupt, block_name(old) + " has no METADATA_ITEM in the extent tree");
    FSCTL_TRY_ASSIGN(auto rec, decode_extent_item(k, p.item_data()));
    std::vector<Key> keyed;
    {
      ctree::Path q = p;
      while (true) {
        FSCTL_TRY_ASSIGN(bool more, ctree::next_item(t, q));
        if (!more) break;
        Key qk = q.key();
        if (qk.objectid != old) break;
        if (qk.type == KeyType::TREE_BLOCK_REF || qk.type == KeyType::SHARED_BLOCK_REF) keyed.push_back(qk);
      }
    }
    {
      u64 backrefs = keyed.size() + inline_block_backrefs(rec);
      if (rec.refs != backrefs)
        return make_error(Errc::corrupt, block_name(old) + ": its METADATA_ITEM says refs " + std::to_string(rec.refs) + " but has " +
                                             std::to_string(backrefs) + " backrefs: the extent tree is damaged (run btrfs check)");
    }
    if (rec.flags & BLOCK_FLAG_FULL_BACKREF) full_backref.insert(old);
    FSCTL_TRY(ctree::delete_item(t, *ext, p));
    for (const Key& kk : keyed) {
      ctree::Path q;
      FSCTL_TRY_ASSIGN(bool found, ctree::search_slot_for_write(t, *ext, kk, 0, q));
      if (!found) return make_error(Errc::corrupt, "keyed backref " + key_to_string(kk) + " vanished");
      FSCTL_TRY(ctree::delete_item(t, *ext, q));
    }
    for (auto& r : rec.inline_refs) {
      if (r.type != KeyType::SHARED_BLOCK_REF) continue;
      FSCTL_TRY_ASSIGN(r.parent, remap_parent(old, r.parent));
    }
    sort_inline_refs(rec.inline_refs);
    FSCTL_TRY(ctree::insert_item(t, *ext, Key{nb_bytenr, KeyType::METADATA_ITEM, level}, encode_extent_item(rec)));
    for (const Key& kk : keyed) {
      Key nk{nb_bytenr, kk.type, kk.offset};
      if (kk.type == KeyType::SHARED_BLOCK_REF) {
        FSCTL_TRY_ASSIGN(nk.offset, remap_parent(old, kk.offset));
      }
      FSCTL_TRY(ctree::insert_item(t, *ext, nk, {}));
    }
  }

  timer.mark("4 extent items moved");
  // 5. What a FULL_BACKREF block references by its bytenr follows it: its
  // children's SHARED_BLOCK_REFs (those not copied themselves: a copied
  // child's backref was remapped in step 4) and, for a leaf, the
  // SHARED_DATA_REFs of the data extents its file extent items point at.
  // A leaf's items are read from the original, which is pinned until the
  // commit (its copy has the same items and may be written back already).
  std::vector<ctree::BlockRequest> fb_leaves;
  for (u64 old : full_backref) {
    u8 level = copy_.at(old);
    if (level == 0) {
      fb_leaves.push_back({old, checks_.at(old)});
      continue;
    }
    for (u64 c : nodes_.at(old).children) {
      if (memo.count(c)) continue;
      FSCTL_TRY(remap_full_backref(t, *ext, Key{c, KeyType::METADATA_ITEM, static_cast<u64>(level - 1)},
                                   KeyType::SHARED_BLOCK_REF, old, memo.at(old)));
      st.backrefs_remapped++;
    }
  }
  std::map<u64, std::set<std::pair<u64, u64>>> leaf_data;  // original leaf -> (disk_bytenr, disk_num_bytes)
  FSCTL_TRY(t.read_tree_blocks(std::move(fb_leaves), [&](const cache::TreeBlockRef& b) -> Status {
    NodeView v = b->view();
    auto& data = leaf_data[b->bytenr];
    for (u32 i = 0; i < v.nritems(); ++i) {
      if (v.item_type_at(i) != KeyType::EXTENT_DATA) continue;
      // A short or inconsistent item is corruption here as everywhere: its
      // data extent (if any) would keep a SHARED_DATA_REF to the old leaf.
      auto fe = decode_file_extent(v.item_data(i));
      if (!fe)
        return make_error(fe.error().context("tree block " + std::to_string(b->bytenr) + " slot " + std::to_string(i)));
      if (!fe->has_data_extent()) continue;  // inline or a hole: no data extent
      data.emplace(fe->disk_bytenr, fe->disk_num_bytes);
    }
    return {};
  }));
  for (auto& [old, data] : leaf_data) {
    for (auto [bytenr, len] : data) {
      FSCTL_TRY(remap_full_backref(t, *ext, Key{bytenr, KeyType::EXTENT_ITEM, len}, KeyType::SHARED_DATA_REF, old, memo.at(old)));
      st.backrefs_remapped++;
    }
  }

  timer.mark("5 full backrefs remapped");
  // 6. Global trees: copy-on-write of the path to each of their blocks in a
  // target (the allocator no longer uses the targets, so the copies land
  // elsewhere). Repeated until a walk finds none: the commit's own changes
  // only copy paths into non-target space. (Steps 3-5 may already have
  // copied some of them: global_found, from before step 1, has them all.)
  for (u64 id : GLOBAL_TREES) {
    if (id != ROOT_TREE_OBJECTID && !fs.find_root(id)) continue;
    for (int round = 0;; ++round) {
      if (round > 16) return make_error(Errc::aborted, "tree " + tree_name(id) + " still has blocks in the relocated block groups");
      FSCTL_TRY_ASSIGN(auto* r, t.root(id));
      std::set<u64> found;
      FSCTL_TRY_ASSIGN(auto keys, find_target_paths(t, *r, in_target, found));
      if (keys.empty()) break;
      for (const Key& k : keys) {
        ctree::Path p;
        FSCTL_TRY(ctree::search_slot_for_write(t, *r, k, 0, p));
      }
    }
  }
  st.tree_blocks_copied += global_found.size();
  timer.mark("6 global trees copied");

  // Every tree block of the targets must have been reached by some tree.
  for (auto& [b, level] : targets_) {
    if (memo.count(b) || global_found.count(b)) continue;
    return make_error(Errc::corrupt, block_name(b) + " (level " + std::to_string(level) + ") in block group " +
                                         std::to_string(fs.block_group_of(b) ? fs.block_group_of(b)->start : 0) +
                                         " has an extent item but no tree reaches it (a leaked extent: run btrfs check); nothing was written");
  }
  st.relocated_extents += targets_.size();
  return {};
}

}  // namespace fsctl::relocation
