// SPDX-License-Identifier: GPL-2.0-only
// Transaction core: block allocation and freeing, dirty blocks, roots, and
// the commit sequence (DESIGN.md "Writing", invariants 1-4).
#include "lib/transaction/transaction.h"

#include <cstring>

#include "lib/ctree/search.h"
#include "lib/format/items.h"
#include "lib/format/names.h"

namespace fsctl::transaction {
using namespace fsctl::format;

Transaction::Transaction(fs::FsInfo& fs) : fs_(fs) { transid_ = fs.super().generation.get() + 1; }

Result<std::unique_ptr<Transaction>> Transaction::start(fs::FsInfo& fs, bool allow_changing_bg_tree) {
  const SuperBlock& sb = fs.super();
  // A read-only FsInfo may start a transaction to plan and reserve (dry
  // runs); its commit fails before writing (FsInfo::write_tree_blocks).
  if (u64 unk = fs.unknown_incompat())
    return make_error(Errc::unsupported, "filesystem has incompat features fsctl does not know (0x" + std::to_string(unk) + "): refusing to write");
  if (sb.log_root.get())
    return make_error(Errc::unsupported, "log tree at " + std::to_string(sb.log_root.get()) +
                                             " needs replay: mount the filesystem once (or btrfs rescue zero-log) before writing");
  if (!(sb.incompat_flags.get() & INCOMPAT_SKINNY_METADATA))
    return make_error(Errc::unsupported, "filesystem without skinny-metadata: writing is not supported yet (btrfstune -x adds it)");
  u64 cro = sb.compat_ro_flags.get();
  if (!(cro & COMPAT_RO_FREE_SPACE_TREE) || !(cro & COMPAT_RO_FREE_SPACE_TREE_VALID))
    return make_error(Errc::unsupported, "filesystem has no valid free space tree (v1 space cache): mount once with -o space_cache=v2 first; fsctl does not write v1 caches");
  u64 f = sb.flags.get();
  u64 changing = SUPER_FLAG_CHANGING_FSID | SUPER_FLAG_CHANGING_FSID_V2 | SUPER_FLAG_CHANGING_DATA_CSUM | SUPER_FLAG_CHANGING_META_CSUM |
                 (allow_changing_bg_tree ? 0 : SUPER_FLAG_CHANGING_BG_TREE);
  if (f & changing)
    return make_error(Errc::unsupported, "an interrupted operation is recorded in the superblock flags (" + super_flags_to_string(f & changing) +
                                             "): finish it first");
  if (f & SUPER_FLAG_ERROR) return make_error(Errc::unsupported, "superblock has the ERROR flag: run btrfs check first");
  if (fs.block_groups().empty()) return make_error(Errc::invalid_argument, "filesystem opened without block groups");
  // Block group items the kernel's tree checker rejects (check_block_group_item)
  // must not be carried on by a write.
  for (auto& bg : fs.block_groups()) {
    std::string what = "block group " + std::to_string(bg.start) + " (item in " + tree_name(bg.item_tree) + ")";
    if (bg.used > bg.length)
      return make_error(Errc::corrupt, what + ": used " + std::to_string(bg.used) + " exceeds its length " + std::to_string(bg.length));
    if (bg.chunk_objectid != FIRST_CHUNK_TREE_OBJECTID)
      return make_error(Errc::corrupt, what + ": chunk_objectid has " + std::to_string(bg.chunk_objectid) + " expect " +
                                           std::to_string(FIRST_CHUNK_TREE_OBJECTID));
    const Chunk* c = fs.chunk_map().find(bg.start);
    u64 mask = BLOCK_GROUP_TYPE_MASK | BLOCK_GROUP_PROFILE_MASK;
    if (!c || (c->type & mask) != (bg.flags & mask))
      return make_error(Errc::corrupt, what + ": flags " + block_group_flags_to_string(bg.flags) + " differ from its chunk's");
  }
  return std::unique_ptr<Transaction>(new Transaction(fs));
}

Result<ctree::WriteRoot*> Transaction::root(u64 root_id) {
  auto it = roots_.find(root_id);
  if (it != roots_.end()) return &it->second;
  if (deleted_trees_.count(root_id)) return make_error(Errc::not_found, "tree " + tree_name(root_id) + " was deleted");
  auto r = fs_.find_root(root_id);
  if (!r) return make_error(Errc::not_found, "tree " + tree_name(root_id) + " does not exist");
  if (root_id == CHUNK_TREE_OBJECTID) return make_error(Errc::unsupported, "the chunk tree is not modified by this engine");
  ctree::WriteRoot w{root_id, r->bytenr, r->level, r->generation};
  return &roots_.emplace(root_id, w).first->second;
}

std::shared_ptr<cache::TreeBlock> Transaction::dirty_block(u64 bytenr) {
  auto it = dirty_.find(bytenr);
  return it == dirty_.end() ? nullptr : it->second;
}

Result<cache::TreeBlockRef> Transaction::read_tree_block(u64 bytenr, const ctree::ParentCheck& check) {
  if (auto d = dirty_block(bytenr)) {
    if (auto r = ctree::check_parent(d->view(), check); !r)
      return make_error(r.error().context("tree block " + std::to_string(bytenr) + " (new in this transaction)"));
    return cache::TreeBlockRef(d);
  }
  return fs_.read_tree_block(bytenr, check);
}

Status Transaction::read_tree_blocks(std::vector<ctree::BlockRequest> requests,
                                     const std::function<Status(const cache::TreeBlockRef&)>& visit, bool keep_in_cache) {
  std::vector<ctree::BlockRequest> rest;
  for (auto& r : requests) {
    if (dirty_.count(r.bytenr)) {
      FSCTL_TRY_ASSIGN(auto b, read_tree_block(r.bytenr, r.check));
      FSCTL_TRY(visit(b));
    } else {
      rest.push_back(r);
    }
  }
  return fs_.read_tree_blocks(std::move(rest), visit, keep_in_cache);
}

BlockGroupSpace* Transaction::space_of(u64 bytenr) {
  for (auto& s : space_)
    if (bytenr >= s.start && bytenr - s.start < s.length) return &s;
  return nullptr;
}

Result<std::shared_ptr<cache::TreeBlock>> Transaction::alloc_tree_block(u64 owner, u8 level) {
  FSCTL_TRY(load_space());
  u32 ns = nodesize();
  FSCTL_TRY_ASSIGN(u64 bytenr, find_free(ns));
  auto b = std::make_shared<cache::TreeBlock>();
  b->bytenr = bytenr;
  b->data.assign(ns, 0);
  b->dirty = true;
  Header& h = *reinterpret_cast<Header*>(b->data.data());
  const auto& id = fs_.identity();
  std::memcpy(h.fsid, id.fsid.data(), FSID_SIZE);
  std::memcpy(h.chunk_tree_uuid, id.chunk_tree_uuid.data(), UUID_SIZE);
  h.bytenr.set(bytenr);
  h.flags.set(HEADER_FLAG_WRITTEN | (MIXED_BACKREF_REV << BACKREF_REV_SHIFT));
  h.generation.set(transid_);
  h.owner.set(owner);
  h.nritems.set(0);
  h.level = level;
  dirty_[bytenr] = b;
  fs_.cache().erase(bytenr);
  pending_add_[bytenr] = {owner, level};
  // A block of this transaction freed after the free space tree recorded it
  // as used left a pending "free" op: reusing it cancels that op.
  auto fst = pending_fst_.find(bytenr);
  if (fst != pending_fst_.end() && fst->second)
    pending_fst_.erase(fst);
  else
    pending_fst_[bytenr] = false;
  bg_delta_[space_of(bytenr)->start] += ns;
  bytes_used_delta_ += ns;
  stats_.blocks_allocated++;
  stats_.used_bytes += ns;
  return b;
}

Status Transaction::free_tree_block(u64 bytenr, u64 owner, u8 level) {
  u32 ns = nodesize();
  FSCTL_TRY(load_space());
  BlockGroupSpace* s = space_of(bytenr);
  if (!s) return make_error(Errc::corrupt, "freeing tree block " + std::to_string(bytenr) + " outside every metadata block group");
  if (dirty_.erase(bytenr)) {
    // Allocated by this transaction: it never reached the disk, so its space
    // is reusable at once; undo what was recorded for it.
    if (!pending_add_.erase(bytenr)) pending_drop_[bytenr] = {owner, level};  // its extent item exists now
    extent_inserted_.erase(bytenr);
    if (fst_applied_.erase(bytenr))
      pending_fst_[bytenr] = true;
    else
      pending_fst_.erase(bytenr);
    s->free[bytenr] = ns;
  } else {
    FSCTL_TRY(check_droppable(bytenr, owner, level));
    pending_drop_[bytenr] = {owner, level};
    pending_fst_[bytenr] = true;
    pinned_.insert(bytenr);
  }
  bg_delta_[s->start] -= ns;
  bytes_used_delta_ -= ns;
  stats_.blocks_freed++;
  return {};
}

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
    for (auto& [st, len] : sp.free) avail += len / ns * ns;
  if (want > avail)
    return make_error(Errc::nospc, "not enough metadata space: need " + std::to_string(want) + " bytes, " +
                                       std::to_string(avail) + " free in metadata block groups (nothing was written)");
  reserved_ = want;
  return want;
}

}  // namespace fsctl::transaction
