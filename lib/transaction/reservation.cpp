// SPDX-License-Identifier: GPL-2.0-only
// Reservation made before a transaction's first write (DESIGN.md invariant
// 4): an upper bound of the metadata blocks an operation and its commit may
// allocate, from the shapes of the trees it touches.
#include <algorithm>

#include "lib/format/items.h"
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
};

u64 ceil_div(u64 a, u64 b) { return (a + b - 1) / b; }

// Upper bound of the blocks one tree allocates for `k` item changes of which
// `ins` insert (or grow) items, `large` of them by more than half a leaf:
// every block on the k paths copied once (at most all blocks of a level);
// one new leaf per insertion (two for a large one: the double split), and
// one for a tree emptied by deletions; node splits: a node splits when it
// reaches node_max_ptrs - 1, so only nodes within `add` of that can split
// at once, and a split half needs max/2 - 1 more pointers before it splits
// again; growth above the root adds one block per level.
u64 tree_bound(const TreeShape& s, u64 k, u64 ins, u64 large, bool deletes, u32 max_ptrs) {
  u64 blocks = 0;
  for (u64 n : s.blocks) blocks += std::min(n, k);
  u64 add = ins + large + (deletes ? 1 : 0);
  blocks += add;
  u64 half = max_ptrs / 2 - 1;
  for (std::size_t l = 1; add > 0 && l < static_cast<std::size_t>(MAX_LEVEL); ++l) {
    u64 splits;
    if (l < s.height) {
      u64 near = 0;
      for (u32 p : s.node_fill[l])
        if (p + add >= max_ptrs - 1) ++near;
      splits = std::min(near, k) + ceil_div(add, half);
    } else {
      blocks += 1;  // a new root above the split one
      u64 ptrs = add + 1;
      splits = ptrs >= max_ptrs - 1 ? ceil_div(ptrs, half) : 0;
    }
    blocks += splits;
    add = splits;
  }
  return blocks;
}

// Shape of the tree at `root` (its nodes are read, its leaves are not);
// a tree that does not exist yet is one empty leaf.
Result<TreeShape> shape_of(Transaction& t, const std::optional<ctree::RootRef>& root) {
  TreeShape s;
  if (!root) return s;
  s.height = static_cast<u8>(root->level + 1);
  s.blocks.assign(s.height, 0);
  s.node_fill.assign(s.height, {});
  s.blocks[root->level] = 1;
  std::vector<std::pair<u64, ctree::ParentCheck>> cur;
  ctree::ParentCheck rc;
  rc.level = root->level;
  rc.transid = root->generation;
  cur.emplace_back(root->bytenr, rc);
  for (int level = root->level; level >= 1; --level) {
    std::vector<std::pair<u64, ctree::ParentCheck>> next;
    for (auto& [bytenr, check] : cur) {
      FSCTL_TRY_ASSIGN(auto b, t.read_tree_block(bytenr, check));
      NodeView v = b->view();
      s.node_fill[static_cast<std::size_t>(level)].push_back(v.nritems());
      s.blocks[static_cast<std::size_t>(level - 1)] += v.nritems();
      if (level == 1) continue;
      for (u32 i = 0; i < v.nritems(); ++i) {
        ctree::ParentCheck c;
        c.level = level - 1;
        c.transid = v.ptr_generation(i);
        c.first_key = v.node_key(i);
        next.emplace_back(v.blockptr(i), c);
      }
    }
    cur = std::move(next);
  }
  return s;
}

}  // namespace

Result<u64> Transaction::reserve_blocks_by_shape(const Reservation& r) {
  u32 ns = nodesize();
  u32 max_ptrs = node_max_ptrs(ns);
  auto shape = [&](u64 id) -> Result<TreeShape> {
    std::optional<ctree::RootRef> ref;
    if (auto it = roots_.find(id); it != roots_.end())
      ref = it->second.ref();
    else
      ref = fs_.find_root(id);
    return shape_of(*this, ref);
  };
  u64 k = r.items_inserted + r.items_updated + r.items_deleted;
  // The touched trees.
  u64 touched = 0;
  for (u64 id : r.trees) {
    FSCTL_TRY_ASSIGN(auto s, shape(id));
    touched += tree_bound(s, k, r.items_inserted, r.items_large, r.items_deleted > 0, max_ptrs);
  }
  touched += r.extra_blocks + r.extra_blocks / 4;
  // The commit's trees (its fixed point): every new block adds an extent
  // item and marks its range used in the free space tree; every copied block
  // drops its extent item and frees its range; block group items and root
  // items change once each. Their own new blocks feed back, so iterate.
  u64 nbgs = space_.size();
  FSCTL_TRY_ASSIGN(auto ext, shape(EXTENT_TREE_OBJECTID));
  FSCTL_TRY_ASSIGN(auto fst, shape(FREE_SPACE_TREE_OBJECTID));
  FSCTL_TRY_ASSIGN(auto rt, shape(ROOT_TREE_OBJECTID));
  std::optional<TreeShape> bgt, quota;
  if (fs_.find_root(BLOCK_GROUP_TREE_OBJECTID)) {
    FSCTL_TRY_ASSIGN(auto s, shape(BLOCK_GROUP_TREE_OBJECTID));
    bgt = s;
  }
  if (fs_.find_root(QUOTA_TREE_OBJECTID)) {
    FSCTL_TRY_ASSIGN(auto s, shape(QUOTA_TREE_OBJECTID));
    quota = s;
  }
  u64 data = leaf_data_size(ns);
  u64 commit = 0;
  for (int round = 0; round < 8; ++round) {
    u64 x = touched + commit;  // blocks allocated (each may also free the block it copies)
    // Extent tree: x inserts of a skinny METADATA_ITEM with one inline ref
    // (item header + 33 bytes), x drops, one update per block group. Small
    // items split by count leave halves at least about half full, so a leaf
    // splits once per half a leaf of inserted bytes, plus one per level.
    u64 ext_ins_bytes = x * (sizeof(Item) + 33);
    u64 c = tree_bound(ext, 2 * x + nbgs, ceil_div(2 * ext_ins_bytes, data) + ext.height, 0, true, max_ptrs);
    // Free space tree: each allocation or free rewrites at most two
    // FREE_SPACE_EXTENT items (empty, header only) and the block group's info.
    u64 fst_ins_bytes = 2 * 2 * x * sizeof(Item);
    c += tree_bound(fst, 2 * x + nbgs, ceil_div(2 * fst_ins_bytes, data) + fst.height, 0, true, max_ptrs);
    // Root tree: one ROOT_ITEM per changed tree (items updated in place).
    c += tree_bound(rt, r.trees.size() + 4, 0, 0, false, max_ptrs);
    if (bgt) c += tree_bound(*bgt, nbgs, 0, 0, false, max_ptrs);
    if (quota) c += tree_bound(*quota, 1, 0, 0, false, max_ptrs);
    if (c == commit) break;
    commit = c;
  }
  return touched + commit;
}

Result<u64> Transaction::reserve(const Reservation& r) {
  FSCTL_TRY(load_space());
  u32 ns = nodesize();
  // Per changed item: a copied path of the touched tree (its height, at most
  // MAX_LEVEL) and, for insertions, one split per level. Every new block
  // also changes the extent tree and the free space tree (one leaf path each,
  // amortized: one path per 16 blocks) — the commit's fixed point.
  // Without the trees named: the tallest tree's height per item.
  u64 height = 0;
  for (auto& e : fs_.root_entries()) height = std::max<u64>(height, e.item.level + 1u);
  height = std::max<u64>(height, fs_.super().root_level + 1u);
  u64 per_update = height;
  u64 per_insert = 2 * height;
  u64 blocks = r.items_updated * per_update + r.items_inserted * per_insert + r.items_deleted * per_update;
  blocks = std::min<u64>(blocks, (r.items_updated + r.items_inserted + r.items_deleted) * per_insert);
  u64 cow_roots = 3 * height * r.trees_touched;  // root tree + extent tree + free space tree paths
  blocks += cow_roots + blocks / 8 + 4 + r.extra_blocks + r.extra_blocks / 4;
  if (!r.trees.empty()) {
    FSCTL_TRY_ASSIGN(blocks, reserve_blocks_by_shape(r));
  }
  u64 want = blocks * ns;
  u64 avail = 0;
  for (auto& sp : space_)
    if (!excluded_bgs_.count(sp.start))
      for (auto& [st, len] : sp.free) avail += len / ns * ns;
  if (want > avail)
    return make_error(Errc::nospc, "not enough metadata space: need " + std::to_string(want) + " bytes, " +
                                       std::to_string(avail) + " free in metadata block groups (nothing was written)");
  reserved_ = want;
  return want;
}

}  // namespace fsctl::transaction
