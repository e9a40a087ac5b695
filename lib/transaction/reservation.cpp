// SPDX-License-Identifier: GPL-2.0-only
// Reservation made before a transaction's first write (DESIGN.md invariant
// 4): an upper bound of the metadata blocks an operation and its commit may
// allocate, from the shapes of the trees it touches — or, for changes
// planned key by key (reservation.h), from a replay of them on a shadow of
// their tree, with the commit's trees bounded from its count. The free
// space tree's share includes the extent<->bitmap conversions the commit's
// updates may cause (free_space_tree.cpp).
#include "lib/transaction/reservation.h"

#include <algorithm>

#include "lib/format/extent_item.h"
#include "lib/format/free_space.h"
#include "lib/format/node_layout.h"
#include "lib/format/root_item.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

namespace {

// A tree's shape for the reservation: blocks per level and the fill of every
// node (levels >= 1; leaves are counted from their parents, not read).
struct TreeShape {
  u8 height = 1;
  std::vector<u64> blocks{1};
  std::vector<std::vector<u32>> node_fill{{}};
  // Per level, the blocks a change confined to the shape's key ranges can
  // copy (shape_of: the blocks whose key span meets a range, plus the two
  // siblings of every run of them); without ranges, every block.
  std::vector<u64> reach{1};
};

// Objectid ranges [first, last] (inclusive) a commit's changes stay in.
using KeyRanges = std::vector<std::pair<u64, u64>>;

u64 ceil_div(u64 a, u64 b) { return (a + b - 1) / b; }

// What changes in one tree, as counts.
struct TreeChanges {
  u64 paths = 0;       // searches that copy a path (every change)
  u64 siblings = 0;    // of them, insertions (pushes into siblings) and deletions (merges with siblings)
  u64 inserts = 0;     // insertion or growth searches (the only ones that split)
  u64 new_leaves = 0;  // bound of the leaves allocated (splits, an emptied tree's new root leaf)
};

// Upper bound of the blocks one tree allocates for `c` (lib/ctree/write.cpp):
//  - copies: per level, the block on each change's path plus, for an
//    insertion (pushes into a leaf's two siblings, a node's one) or a
//    deletion (merges with both siblings, the child a collapsing root
//    promotes), two siblings; never more blocks than the level has, each
//    is copied once per transaction;
//  - new leaves: c.new_leaves;
//  - node splits at a level fed `add` new pointers by the splits below: a
//    node splits when an insertion passes it at node_max_ptrs - 1 pointers;
//    pushes and merges never leave a node above a quarter node below that,
//    and a split leaves halves below it too, so apart from nodes already
//    within `add` of the threshold a node needs a quarter node of new
//    pointers per split; and one insertion splits at most one node per level;
//  - a new root above a split root, level after level.
u64 tree_bound(const TreeShape& s, const TreeChanges& c, u32 max_ptrs) {
  u64 cow = c.paths + 2 * c.siblings;
  u64 blocks = 0;
  for (u64 n : s.reach) blocks += std::min(n, cow);
  blocks += c.new_leaves;
  u64 add = c.new_leaves;
  u64 quarter = std::max<u32>(max_ptrs / 4, 1);
  for (std::size_t l = 1; l < static_cast<std::size_t>(MAX_LEVEL) && c.inserts > 0; ++l) {
    u64 splits;
    if (l < s.height) {
      u64 near = 0;
      for (u32 p : s.node_fill[l])
        if (p + add >= max_ptrs - 1) ++near;
      splits = std::min(c.inserts, std::min(near, cow) + ceil_div(add, quarter));
    } else {
      if (add == 0) break;
      blocks += 1;  // a new root above the split one
      u64 ptrs = add + 1;
      splits = ptrs >= max_ptrs - 1 ? std::min(c.inserts, ceil_div(ptrs, quarter)) : 0;
    }
    blocks += splits;
    add = splits;
  }
  return blocks;
}

// Counts of an operation described by a Reservation, for tree `s` (leaf
// data area `data` bytes).
TreeChanges changes_of(const Reservation& r, const TreeShape& s, u64 data) {
  TreeChanges c;
  c.paths = r.items_inserted + r.items_updated + r.items_deleted;
  c.siblings = r.items_inserted + r.items_deleted;
  c.inserts = r.items_inserted;
  // One split per insertion, two for a large one (the double split); one
  // new root leaf for a tree emptied by deletions. With the inserted bytes
  // known: a leaf splits only when full, and a split (by item count, items
  // under half a leaf) leaves halves at most about three quarters full, so
  // a leaf splits again only after a quarter leaf of inserted bytes; every
  // leaf touched may be full already (one split each), and a merge after a
  // deletion may fill one (one each); plus one per level.
  u64 splits = r.items_inserted;
  if (r.insert_bytes)
    splits = std::min(splits, ceil_div(4 * r.insert_bytes, data) + std::min(r.items_inserted, s.blocks[0]) +
                                  std::min(r.items_deleted, s.blocks[0]) + s.height);
  c.new_leaves = splits + r.items_large + (r.items_deleted ? 1 : 0);
  return c;
}

// A commit's tree changed by `inserts` insertions of small items of
// `item_bytes` (header included), `deletes` deletions and `updates` in-place
// updates, each a search. Leaves: small items split by count leave halves
// about half full, so a leaf splits about once per half a leaf of inserted
// bytes, plus once per level; a merge may fill a sibling so that it splits
// at the next insertion, so add one per possible merge (at most one per
// deletion and per leaf); never more than one per insertion.
TreeChanges commit_changes(const TreeShape& s, u64 inserts, u64 item_bytes, u64 deletes, u64 updates, u64 data) {
  TreeChanges c;
  c.paths = inserts + deletes + updates;
  c.siblings = inserts + deletes;
  c.inserts = inserts;
  u64 merges = std::min(deletes, s.reach[0]);
  c.new_leaves = std::min(inserts, ceil_div(2 * inserts * item_bytes, data) + s.height + merges);
  return c;
}

void add_changes(TreeChanges& a, const TreeChanges& b, u64 times = 1) {
  a.paths += b.paths * times;
  a.siblings += b.siblings * times;
  a.inserts += b.inserts * times;
  a.new_leaves += b.new_leaves * times;
}

// One conversion of a block group's free space between extents and bitmaps
// (free_space_tree.cpp; kernel convert_free_space_to_bitmaps / _to_extents),
// either way, in the free space tree: up to E = max(extent_count, high) + 1
// FREE_SPACE_EXTENT items (the count that triggers it is high + 1, or one
// step from a count already past it) and one FREE_SPACE_BITMAP per
// sectorsize * FREE_SPACE_BITMAP_BITS bytes of the group, one kind deleted
// and the other inserted, all in the group's contiguous key range; the
// FREE_SPACE_INFO updated. Each item is a search (a path, siblings for
// pushes and merges). New leaves: the inserted items are contiguous, so
// after a split the next ones fill the half-empty leaf first: a leaf per
// half leaf of inserted bytes plus one per level. The inserted bytes never
// exceed the deleted ones in the same key range (by the thresholds'
// construction: high + 1 extent items outweigh the bitmaps, and fewer than
// high - 100 of them weigh less), so merges of the emptied leaves only move
// room around.
TreeChanges conversion_changes(const TreeShape& fst, const ConversionGroup& g, u32 sectorsize, u64 data) {
  FreeSpaceThresholds th = free_space_thresholds(g.length, sectorsize);
  u64 range = u64{sectorsize} * FREE_SPACE_BITMAP_BITS;
  u64 bitmaps = ceil_div(g.length, range);
  u64 extents = u64{std::max(g.extent_count, th.bitmap_high_thresh)} + 1;
  u64 bitmap_bytes = bitmaps * (sizeof(Item) + FREE_SPACE_BITMAP_SIZE), extent_bytes = extents * sizeof(Item);
  TreeChanges c;
  c.paths = extents + bitmaps + 1;
  c.siblings = extents + bitmaps;
  c.inserts = std::max(extents, bitmaps);
  c.new_leaves = std::max(std::min(bitmaps, ceil_div(2 * bitmap_bytes, data) + fst.height),
                          std::min(extents, ceil_div(2 * extent_bytes, data) + fst.height));
  return c;
}

// Bound of the conversions of a commit that makes at most `steps` updates
// of extent_count (one per range a block allocation or free changes, each
// by at most one: free_space_tree.cpp). The kernel's rule
// (update_free_space_extent_count): a group in extent form with more than
// high extents converts to bitmaps, one in bitmap form with fewer than low
// back to extents. free_space_tree.cpp applies it once per group per
// transaction, after the updates, so a group converts at most once, and
// only when the steps can take its count past its threshold (at least one
// step; a group whose low is 0 never converts back).
TreeChanges conversions(const TreeShape& fst, const std::vector<ConversionGroup>& groups, u64 steps,
                        u32 sectorsize, u64 data) {
  TreeChanges all;
  for (const auto& g : groups) {
    FreeSpaceThresholds th = free_space_thresholds(g.length, sectorsize);
    u64 first;
    if (!g.using_bitmaps)
      first = g.extent_count > th.bitmap_high_thresh ? 1 : u64{th.bitmap_high_thresh} + 1 - g.extent_count;
    else if (th.bitmap_low_thresh == 0)
      continue;
    else
      first = g.extent_count < th.bitmap_low_thresh ? 1 : u64{g.extent_count} - th.bitmap_low_thresh + 1;
    if (first > steps) continue;
    add_changes(all, conversion_changes(fst, g, sectorsize, data));
  }
  return all;
}

// Shape of the tree at `root` (its nodes are read, its leaves are not);
// a tree that does not exist yet is one empty leaf. With `ranges`, `reach`
// counts per level the blocks whose key span (from their key in the parent
// to the next one, objectids inclusive) meets a range, plus two siblings per
// run of such blocks (pushes and merges move items into the neighbours);
// without, every block.
Result<TreeShape> shape_of(Transaction& t, const std::optional<ctree::RootRef>& root, const KeyRanges* ranges = nullptr) {
  TreeShape s;
  if (!root) return s;
  s.height = static_cast<u8>(root->level + 1);
  s.blocks.assign(s.height, 0);
  s.node_fill.assign(s.height, {});
  s.reach.assign(s.height, 0);
  s.blocks[root->level] = 1;
  s.reach[root->level] = 1;
  auto meets = [&](u64 lo, u64 hi) {
    for (auto& [a, b] : *ranges)
      if (lo <= b && hi >= a) return true;
    return false;
  };
  // Blocks of a level in key order: their key spans' objectids [lo, hi] and
  // whether they meet a range; the reach of the level from those.
  struct Span {
    u64 bytenr;
    ctree::ParentCheck check;
    u64 lo, hi;
  };
  auto reach_of = [&](const std::vector<bool>& in) {
    u64 n = 0, runs = 0;
    for (std::size_t i = 0; i < in.size(); ++i)
      if (in[i]) {
        ++n;
        if (i == 0 || !in[i - 1]) ++runs;
      }
    return std::min<u64>(in.size(), n + 2 * runs);
  };
  std::vector<Span> cur;
  ctree::ParentCheck rc;
  rc.level = root->level;
  rc.transid = root->generation;
  cur.push_back({root->bytenr, rc, 0, ~u64{0}});
  for (int level = root->level; level >= 1; --level) {
    std::vector<Span> next;
    std::vector<bool> in;
    for (auto& parent : cur) {
      FSCTL_TRY_ASSIGN(auto b, t.read_tree_block(parent.bytenr, parent.check));
      NodeView v = b->view();
      s.node_fill[static_cast<std::size_t>(level)].push_back(v.nritems());
      s.blocks[static_cast<std::size_t>(level - 1)] += v.nritems();
      for (u32 i = 0; i < v.nritems(); ++i) {
        u64 lo = i == 0 ? parent.lo : v.node_key(i).objectid;
        u64 hi = i + 1 < v.nritems() ? v.node_key(i + 1).objectid : parent.hi;
        if (ranges) in.push_back(meets(lo, hi));
        if (level == 1) continue;
        ctree::ParentCheck c;
        c.level = level - 1;
        c.transid = v.ptr_generation(i);
        c.first_key = v.node_key(i);
        next.push_back({v.blockptr(i), c, lo, hi});
      }
    }
    std::size_t l = static_cast<std::size_t>(level - 1);
    s.reach[l] = ranges ? reach_of(in) : s.blocks[l];
    cur = std::move(next);
  }
  return s;
}

}  // namespace

std::vector<ConversionGroup> Transaction::conversion_groups(u64 blocks) const {
  std::vector<ConversionGroup> out;
  u64 need = blocks * nodesize();
  for (bool system : {false, true}) {
    u64 free = 0;
    for (const auto& sp : alloc_.groups(system)) {
      out.push_back({sp.length, sp.extent_count, sp.using_bitmaps});
      if (!alloc_.excluded(sp.start))
        for (auto& [st, len] : sp.free) free += len;
    }
    // Groups the commit may create when the existing ones cannot hold every
    // block (find_free): each starts as one extent.
    if (free < need)
      for (u64 length : chunks_.planned_lengths(fs_, system, need - free)) out.push_back({length, 1, false});
  }
  return out;
}

Result<u64> Transaction::reserve_blocks_by_shape(const Reservation& r) {
  u32 ns = nodesize();
  u32 max_ptrs = node_max_ptrs(ns);
  auto shape = [&](u64 id, const KeyRanges* ranges = nullptr) -> Result<TreeShape> {
    std::optional<ctree::RootRef> ref;
    if (auto it = roots_.all().find(id); it != roots_.all().end())
      ref = it->second.ref();
    else
      ref = fs_.find_root(id);
    return shape_of(*this, ref, ranges);
  };
  // The touched trees.
  u64 touched = 0;
  u64 created = 0;  // trees that do not exist yet: their ROOT_ITEM is inserted
  for (u64 id : r.trees) {
    if (!roots_.has(id) && !fs_.find_root(id)) created++;
    FSCTL_TRY_ASSIGN(auto s, shape(id));
    touched += tree_bound(s, changes_of(r, s, leaf_data_size(ns)), max_ptrs);
  }
  touched += r.extra_blocks + r.extra_blocks / 4 + r.exact_blocks;
  u64 freed = 0;  // blocks of deleted trees
  for (u64 id : r.trees_deleted) {
    FSCTL_TRY_ASSIGN(auto s, shape(id));
    for (u64 n : s.blocks) freed += n;
  }
  // The commit's trees (its fixed point): every new block adds an extent
  // item and marks its range used in the free space tree; every copied block
  // drops its extent item and frees its range; block group items and root
  // items change once each. Their own new blocks feed back, so iterate.
  //
  // Those changes stay in the key ranges of the metadata and system block
  // groups (tree blocks are allocated and freed only there, and only their
  // items, their free space and their block group items change), plus the
  // logical range after the last group, where a chunk the commit creates
  // goes (Transaction::alloc_chunk): in the extent tree, the free space tree
  // and the block group tree the commit copies only the blocks whose keys
  // meet those ranges (and their neighbours), not the whole tree — the
  // data groups' items are the bulk of a large filesystem's extent tree.
  KeyRanges meta;
  u64 end = 0;
  for (auto& [start, ch] : fs_.chunk_map().chunks()) end = std::max(end, start + ch.length);
  for (const auto& bg : fs_.block_groups()) {
    end = std::max(end, bg.start + bg.length);
    if (bg.flags & (BLOCK_GROUP_METADATA | BLOCK_GROUP_SYSTEM)) meta.emplace_back(bg.start, bg.start + bg.length - 1);
  }
  meta.emplace_back(end, ~u64{0});
  u64 nbgs = alloc_.groups(false).size() + alloc_.groups(true).size();
  FSCTL_TRY_ASSIGN(auto ext, shape(EXTENT_TREE_OBJECTID, &meta));
  FSCTL_TRY_ASSIGN(auto fst, shape(FREE_SPACE_TREE_OBJECTID, &meta));
  FSCTL_TRY_ASSIGN(auto rt, shape(ROOT_TREE_OBJECTID));
  std::optional<TreeShape> bgt, quota;
  if (fs_.find_root(BLOCK_GROUP_TREE_OBJECTID)) {
    FSCTL_TRY_ASSIGN(auto s, shape(BLOCK_GROUP_TREE_OBJECTID, &meta));
    bgt = s;
  }
  if (fs_.find_root(QUOTA_TREE_OBJECTID)) {
    FSCTL_TRY_ASSIGN(auto s, shape(QUOTA_TREE_OBJECTID));
    quota = s;
  }
  u64 data = leaf_data_size(ns);
  u64 item_bytes = tree_block_extent_item_size(writes_skinny_metadata(fs_));
  u64 commit = 0;
  for (int round = 0; round < 8; ++round) {
    u64 x = touched + commit;  // blocks allocated (each may also free the block it copies)
    u64 frees = x + freed;
    // Extent tree: x inserts of a tree block's extent item with one inline
    // ref (item header + 33 bytes skinny, 51 in the old form with
    // btrfs_tree_block_info), the drops, one update per block group (when
    // their items live there).
    u64 c = tree_bound(ext, commit_changes(ext, x, sizeof(Item) + item_bytes, frees, nbgs, data), max_ptrs);
    // Free space tree: each of the x allocations and the frees deletes up to
    // two FREE_SPACE_EXTENT items (header only), inserts up to two and
    // updates the block group's FREE_SPACE_INFO; and the groups' conversions
    // between extents and bitmaps those updates may cause.
    u64 events = x + frees;
    TreeChanges fst_changes = commit_changes(fst, 2 * events, sizeof(Item), 2 * events, events + nbgs, data);
    add_changes(fst_changes, conversions(fst, conversion_groups(x), events, fs_.sectorsize(), data));
    c += tree_bound(fst, fst_changes, max_ptrs);
    // Root tree: one ROOT_ITEM per changed tree, updated in place, one
    // inserted per tree the operation creates, one deleted per tree it
    // deletes.
    TreeChanges root_items = commit_changes(rt, created, sizeof(Item) + ROOT_ITEM_SIZE, r.trees_deleted.size(),
                                            r.trees.size() + 4, data);
    c += tree_bound(rt, root_items, max_ptrs);
    if (bgt) c += tree_bound(*bgt, commit_changes(*bgt, 0, 0, 0, nbgs, data), max_ptrs);
    if (quota) c += tree_bound(*quota, commit_changes(*quota, 0, 0, 0, 1, data), max_ptrs);
    if (c == commit) break;
    commit = c;
  }
  return touched + commit;
}

Result<u64> Transaction::reserve(const Reservation& r) {
  FSCTL_TRY(load_space());
  u32 ns = nodesize();
  // Per changed item: a copied path of the touched tree (its height, at most
  // MAX_LEVEL) and, for insertions and deletions, splits and siblings
  // changed by pushes and merges. Every new block
  // also changes the extent tree and the free space tree (one leaf path each,
  // amortized: one path per 16 blocks) — the commit's fixed point.
  // Without the trees named: the tallest tree's height per item.
  u64 height = 0;
  for (auto& e : fs_.root_entries()) height = std::max<u64>(height, e.item.level + 1u);
  height = std::max<u64>(height, fs_.super().root_level + 1u);
  // An update copies a path; an insertion also splits a node per level and
  // a leaf twice at most, and pushes into a sibling per level (two at the
  // leaves); a deletion copies up to two siblings per level for merges.
  u64 per_update = height;
  u64 per_insert = 3 * height + 2;
  u64 per_delete = 3 * height;
  u64 blocks = r.items_updated * per_update + r.items_inserted * per_insert + r.items_deleted * per_delete;
  u64 cow_roots = 3 * height * r.trees_touched;  // root tree + extent tree + free space tree paths
  blocks += cow_roots + blocks / 8 + 4 + r.extra_blocks + r.extra_blocks / 4 + r.exact_blocks;
  if (r.trees.empty()) {
    // Free space conversions the blocks' 2 * blocks free space updates may
    // cause (see conversions above), with their commit share.
    std::optional<ctree::RootRef> ref;
    if (auto it = roots_.all().find(FREE_SPACE_TREE_OBJECTID); it != roots_.all().end())
      ref = it->second.ref();
    else
      ref = fs_.find_root(FREE_SPACE_TREE_OBJECTID);
    FSCTL_TRY_ASSIGN(auto fst, shape_of(*this, ref));
    u64 data = leaf_data_size(ns);
    u64 conv = tree_bound(fst, conversions(fst, conversion_groups(blocks), 2 * blocks, fs_.sectorsize(), data), node_max_ptrs(ns));
    blocks += conv + conv / 8;
  } else {
    FSCTL_TRY_ASSIGN(blocks, reserve_blocks_by_shape(r));
  }
  return reserve_bytes(blocks * ns);
}

Result<u64> Transaction::reserve_measured(u64 measured) {
  FSCTL_TRY(load_space());
  u64 ns = nodesize();
  u64 blocks = (measured + ns - 1) / ns;
  u64 avail = allocatable_metadata_bytes() + alloc_.free_metadata_bytes(ns);
  // The guard only where it fits: the rehearsal allocated `measured` from
  // this very state, which proves that much fits even where the count of
  // allocatable space (conservative per new chunk) says less.
  reserved_ = std::max(blocks * ns, std::min((blocks + blocks / 8 + 1) * ns, avail));
  return reserved_;
}

Result<u64> Transaction::system_bytes_available(u64 want) {
  FSCTL_TRY(load_space());
  u32 ns = nodesize();
  u64 free = 0;
  for (const auto& sp : alloc_.groups(true))
    if (!alloc_.excluded(sp.start))
      for (auto& [st, len] : sp.free) free += len / ns * ns;
  if (free < want)
    for (u64 length : chunks_.planned_lengths(fs_, true, want - free)) free += length;
  return free;
}

Result<u64> Transaction::reserve_bytes(u64 want) {
  u32 ns = nodesize();
  u64 avail = allocatable_metadata_bytes() + alloc_.free_metadata_bytes(ns);
  if (want > avail)
    return make_error(Errc::nospc, "not enough metadata space: need " + std::to_string(want) + " bytes, " +
                                       std::to_string(avail) + " free in metadata block groups (nothing was written)");
  reserved_ = want;
  return want;
}

Result<u64> reserve_planned(Transaction& t, Reservation r, const std::vector<PlannedTree>& plans,
                            std::vector<ctree::PlanCount>* counted) {
  u32 ns = t.nodesize();
  // No reservation can exceed the space the filesystem has left (device
  // bytes minus bytes used: more than any metadata profile can get from it),
  // so a replay that gets there stops: ENOSPC.
  const SuperBlock& sb = t.fs().super();
  u64 free_bytes = sb.total_bytes.get() - std::min(sb.total_bytes.get(), sb.bytes_used.get());
  u64 limit = free_bytes / ns + 1;
  u64 planned = 0;
  for (const auto& p : plans) {
    std::optional<ctree::RootRef> ref;  // none: the operation creates the tree
    auto wr = t.root(p.tree);
    if (wr)
      ref = (*wr)->ref();
    else if (wr.error().code != Errc::not_found)
      return make_error(wr.error());
    FSCTL_TRY_ASSIGN(auto n, ctree::count_planned_blocks(t, p.tree, ref, t.transid(), p.changes, limit));
    if (counted) counted->push_back(n);
    if (n.capped)
      return make_error(Errc::nospc, "not enough metadata space: the planned changes of tree " + std::to_string(p.tree) +
                                         " allocate more than " + std::to_string(limit * ns) + " bytes, the free space of the filesystem (nothing was written)");
    planned += n.blocks;
    if (std::find(r.trees.begin(), r.trees.end(), p.tree) == r.trees.end()) r.trees.push_back(p.tree);
  }
  r.extra_blocks += planned;
  return t.reserve(r);
}

}  // namespace fsctl::transaction
