// SPDX-License-Identifier: GPL-2.0-only
// The plan of a relocation (relocate.h; DESIGN.md "Relocation for `balance
// -m`"): what to move, found by reading only: the tree blocks in the target
// block groups (their extent items, either form), the nodes of every
// subvolume tree, the blocks to copy bottom-up, the global trees' blocks in
// the targets, and the reservation for the apply (relocate_apply.cpp).
// Refuses, before anything is written, what the apply could not leave
// consistent (invariant 6).
#include "lib/relocation/relocate.h"

#include <algorithm>
#include <optional>

#include "lib/ctree/block_group_lookup.h"
#include "lib/ctree/search.h"
#include "lib/ctree/tree_block_extent.h"
#include "lib/format/extent_item.h"
#include "lib/format/file_extent.h"
#include "lib/format/items.h"
#include "lib/format/names.h"
#include "lib/relocation/block_backrefs.h"
#include "lib/relocation/global_trees.h"

namespace fsctl::relocation {
using namespace fsctl::format;
using transaction::Transaction;

namespace {

/// Trees the kernel reference-counts (BTRFS_ROOT_SHAREABLE): subvolumes,
/// snapshots and the data relocation tree.
bool is_shareable(u64 id) { return is_fstree(id) || id == DATA_RELOC_TREE_OBJECTID; }

}  // namespace

Result<u64> committed_block_group_used(fs::FsInfo& fs, u64 start) {
  const fs::BlockGroup* bg = fs.block_group_of(start);
  if (!bg || bg->start != start) return make_error(Errc::corrupt, "no block group starts at " + std::to_string(start));
  FSCTL_TRY_ASSIGN(auto found, ctree::find_block_group_item(fs, fs.block_group_trees(), start, bg->length));
  if (!found) return make_error(Errc::corrupt, "block group " + std::to_string(start) + " has no BLOCK_GROUP_ITEM; nothing was written");
  return found->item.used;
}

Result<RelocationPlan> RelocationPlan::make(Transaction& t, const std::set<u64>& targets) {
  RelocationPlan p;
  p.bgs_ = targets;
  fs::FsInfo& fs = t.fs();
  p.root_height_ = static_cast<u8>(fs.super().root_level + 1);
  FSCTL_TRY(p.read_target_extents(t));
  FSCTL_TRY(p.read_subvolume_nodes(t));
  p.select_copies();
  FSCTL_TRY(p.find_global_targets(t));
  FSCTL_TRY(p.check_targets_used(fs));
  return p;
}

// The extent items inside the target block groups: one per tree block to
// move (METADATA_ITEM, or EXTENT_ITEM with btrfs_tree_block_info), with its
// shape for the reservation, and its backrefs, which must agree with its
// refs before anything is copied.
Status RelocationPlan::read_target_extents(Transaction& t) {
  fs::FsInfo& fs = t.fs();
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  // Per target: refs of its extent item and the backrefs found (inline and
  // keyed), which must agree before anything is copied.
  struct RefCount {
    u64 refs = 0, backrefs = 0, leaf = 0;
  };
  std::unordered_map<u64, RefCount> counts;
  for (u64 start : bgs_) {
    const fs::BlockGroup* bg = fs.block_group_of(start);
    if (!bg || bg->start != start) return make_error(Errc::invalid_argument, "no block group starts at " + std::to_string(start));
    ctree::KeyRange range{{bg->start, 0, 0}, {bg->start + bg->length - 1, 0xff, ~0ULL}};
    FSCTL_TRY(ctree::for_each_item(t, ext->ref(), range, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
      Key k = leaf.item_key(slot);
      if (k.type == KeyType::METADATA_ITEM || k.type == KeyType::EXTENT_ITEM) {
        auto rec = decode_extent_item(k, leaf.item_data(slot));
        if (!rec)
          return make_error(rec.error().context("extent item " + key_to_string(k) + " in extent tree leaf " + std::to_string(leaf.bytenr())));
        // Either form of a tree block's item (tree_block_extent.h); the
        // old one keeps its form when it moves with its block.
        if (!ctree::is_tree_block_extent(k, *rec, fs.nodesize()))
          return make_error(Errc::unsupported, "extent item " + key_to_string(k) + " (extent tree leaf " + std::to_string(leaf.bytenr()) +
                                                   ") in block group " + std::to_string(start) +
                                                   ": data extents are not relocated by fsctl");
        targets_[k.objectid] = rec->level;
        ExtentShape& es = target_extents_[k.objectid];
        es.item_bytes = static_cast<u32>(sizeof(Item) + leaf.item_data(slot).size());
        es.full_backref = rec->flags & BLOCK_FLAG_FULL_BACKREF;
        RefCount& c = counts[k.objectid];
        c.refs = rec->refs;
        c.leaf = leaf.bytenr();
        c.backrefs += inline_block_backrefs(*rec);
      } else if (k.type == KeyType::TREE_BLOCK_REF || k.type == KeyType::SHARED_BLOCK_REF) {
        counts[k.objectid].backrefs++;
        target_extents_[k.objectid].keyed++;
      }
      return ctree::Visit::next;
    }));
  }
  // A tree block's refs count its backrefs (kernel: one per
  // TREE_BLOCK_REF/SHARED_BLOCK_REF; btrfs check "refs mismatch"); copying a
  // wrong count would carry the damage on (test 184).
  // The lowest such block is named, whatever the hash order.
  std::optional<std::pair<u64, RefCount>> bad;
  for (auto& [bytenr, c] : counts)
    if (targets_.count(bytenr) && c.refs != c.backrefs && (!bad || bytenr < bad->first)) bad = {bytenr, c};
  if (bad) {
    auto& [bytenr, c] = *bad;
    return make_error(Errc::corrupt, "tree block " + std::to_string(bytenr) + ": its extent item (extent tree leaf " +
                                           std::to_string(c.leaf) + ") says refs " + std::to_string(c.refs) + " but has " +
                                           std::to_string(c.backrefs) + " backrefs: the extent tree is damaged (run btrfs check); nothing was written");
  }
  return {};
}

// The nodes of every subvolume tree, level by level, each read once (a
// node shared by snapshots is reached through several parents). Leaves
// are not read: whether a leaf is in a target follows from its bytenr.
Status RelocationPlan::read_subvolume_nodes(Transaction& t) {
  fs::FsInfo& fs = t.fs();
  std::vector<ctree::BlockRequest> frontier;
  std::unordered_set<u64> seen;
  for (const auto& e : fs.root_entries()) {
    u64 id = e.key.objectid;
    if (!is_shareable(id)) continue;
    if (e.item.refs == 0)
      return make_error(Errc::unsupported, "subvolume " + std::to_string(id) +
                                               " is being deleted (ROOT_ITEM refs 0): finish the drop (fsctl rescue finish-drop, or mount and `btrfs subvolume sync`) before balancing");
    ctree::ParentCheck c;
    c.transid = e.item.generation;
    c.level = e.item.level;
    root_items_.emplace_back(e.item.bytenr, e.key);
    if (!seen.insert(e.item.bytenr).second) continue;
    checks_[e.item.bytenr] = c;
    if (e.item.level > 0) frontier.push_back({e.item.bytenr, c});
  }
  for (auto& [bytenr, key] : root_items_) FSCTL_TRY(must_be_target(fs, bytenr, key.objectid));
  while (!frontier.empty()) {
    std::vector<ctree::BlockRequest> next;
    FSCTL_TRY(t.read_tree_blocks(frontier, [&](const cache::TreeBlockRef& b) -> Status {
      NodeView v = b->view();
      for (u32 i = 0; i < v.nritems(); ++i) FSCTL_TRY(must_be_target(fs, v.blockptr(i), v.owner()));
      Node& n = nodes_[b->bytenr];
      n.level = v.level();
      n.children.reserve(v.nritems());
      for (u32 i = 0; i < v.nritems(); ++i) {
        u64 c = v.blockptr(i);
        n.children.push_back(c);
        if (!seen.insert(c).second) continue;
        if (v.level() > 1 || targets_.count(c)) checks_[c] = ctree::child_check(v, i);
        if (v.level() > 1) next.push_back({c, ctree::child_check(v, i)});
      }
      return {};
    }));
    frontier = std::move(next);
  }
  return {};
}

// A block a tree reaches inside a target must have its extent item, or
// it would be left behind in a block group about to be removed.
Status RelocationPlan::must_be_target(const fs::FsInfo& fs, u64 bytenr, u64 tree) const {
  if (!in_target(fs, bytenr) || targets_.count(bytenr)) return {};
  return make_error(Errc::corrupt, "tree block " + std::to_string(bytenr) + " of tree " + tree_name(tree) + " lies in block group " +
                                       std::to_string(fs.block_group_of(bytenr)->start) +
                                       " but has no extent item in the extent tree (run btrfs check); nothing was written");
}

// What to copy: the targets reached from subvolume roots and every node
// above one (bottom-up over the levels).
void RelocationPlan::select_copies() {
  std::vector<std::pair<u8, u64>> order;
  for (const auto& [b, n] : nodes_) order.emplace_back(n.level, b);
  std::sort(order.begin(), order.end());
  for (auto [level, b] : order) {
    bool need = targets_.count(b) > 0;
    for (u64 c : nodes_[b].children) {
      if (level == 1 && targets_.count(c)) {
        copy_[c] = 0;
        need = true;
      } else if (level > 1 && copy_.count(c)) {
        need = true;
      }
    }
    if (need) copy_[b] = level;
  }
  for (auto& [bytenr, key] : root_items_)
    if (!nodes_.count(bytenr) && targets_.count(bytenr)) copy_[bytenr] = 0;  // a root that is a leaf
}

// The global trees' blocks in the targets (nodes read, not leaves), each
// with its extent item.
Status RelocationPlan::find_global_targets(Transaction& t) {
  fs::FsInfo& fs = t.fs();
  auto in_target = [&](u64 bytenr) { return this->in_target(fs, bytenr); };
  for (u64 id : GLOBAL_TREES) {
    if (id != ROOT_TREE_OBJECTID && !fs.find_root(id)) continue;
    FSCTL_TRY_ASSIGN(auto* r, t.root(id));
    std::set<u64> found;
    FSCTL_TRY(find_target_paths(t, *r, in_target, found));
    for (u64 b : found) FSCTL_TRY(must_be_target(fs, b, id));
    global_found_.insert(found.begin(), found.end());
  }
  return {};
}

// Each target's `used` must be the bytes of its tree blocks: otherwise
// the group would not be empty after relocation (and could never be
// removed), found only after a commit.
Status RelocationPlan::check_targets_used(fs::FsInfo& fs) const {
  std::map<u64, u64> sum;
  for (auto& [b, level] : targets_) sum[fs.block_group_of(b)->start] += fs.nodesize();
  for (u64 start : bgs_) {
    FSCTL_TRY_ASSIGN(u64 used, committed_block_group_used(fs, start));
    if (used != sum[start])
      return make_error(Errc::corrupt, "block group " + std::to_string(start) + ": its item says " + std::to_string(used) +
                                           " bytes used, its tree blocks' extent items add up to " + std::to_string(sum[start]) +
                                           " (run btrfs check); nothing was written");
  }
  return {};
}

bool RelocationPlan::in_target(const fs::FsInfo& fs, u64 bytenr) const {
  const fs::BlockGroup* bg = fs.block_group_of(bytenr);
  return bg && bgs_.count(bg->start) > 0;
}

transaction::Reservation RelocationPlan::reservation(u32 nodesize) const {
  transaction::Reservation r;
  // One pass over the copies: how many are targets, and whether all are
  // (target_extents_ has an entry for every target).
  u64 subvol_targets = 0;
  for (auto& [b, level] : copy_)
    if (targets_.count(b)) ++subvol_targets;
  u64 global_targets = targets_.size() - subvol_targets;
  bool all_targets = subvol_targets == copy_.size();
  // Copies, and the paths of the global trees' blocks (copy-on-write of a
  // path to each: at most the tallest tree's height, 8 levels).
  r.exact_blocks = copy_.size();
  r.extra_blocks = global_targets * 2;
  // Extent tree: per copy one extent item deleted and one inserted, and the
  // full backrefs of its children and data extents updated (at most one per
  // child pointer or file extent item of a leaf: bounded by the slots).
  u64 leaf_slots = leaf_data_size(nodesize) / (sizeof(Item) + FILE_EXTENT_ITEM_SIZE);
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

}  // namespace fsctl::relocation
