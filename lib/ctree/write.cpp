// SPDX-License-Identifier: GPL-2.0-only
// Copy-on-write search, insert, delete, split (kernel ctree.c
// btrfs_search_slot with a transaction, split_leaf, split_node, insert_ptr,
// del_ptr, fixup_low_keys). Only unshared trees are modified: a block owned
// by another root is refused (relocation of shared trees is a later issue).
#include "lib/ctree/write.h"

#include "lib/ctree/search.h"

#include <cstring>

#include "lib/base/assert.h"

namespace fsctl::ctree {
using namespace fsctl::format;

namespace {

std::shared_ptr<cache::TreeBlock> mut_block(TreeWriter& w, const cache::TreeBlockRef& b) {
  auto m = w.dirty_block(b->bytenr);
  return m;
}

// Copies path.nodes[level] into the transaction unless already done, and
// points its parent (or the root) at the copy.
Status cow_at(TreeWriter& w, WriteRoot& root, Path& path, int level) {
  std::size_t l = static_cast<std::size_t>(level);
  const auto& b = path.nodes[l];
  if (w.dirty_block(b->bytenr)) return {};
  NodeView v = b->view();
  if (v.owner() != root.root_id)
    return make_error(Errc::unsupported, "tree block " + std::to_string(b->bytenr) + " of tree " +
                                             std::to_string(root.root_id) + " is owned by " + std::to_string(v.owner()) +
                                             " (shared); copying shared blocks is not supported");
  FSCTL_TRY_ASSIGN(auto nb, w.alloc_tree_block(root.root_id, v.level()));
  u32 ns = w.nodesize();
  std::memcpy(nb->data.data() + sizeof(Header), b->data.data() + sizeof(Header), ns - sizeof(Header));
  NodeMut(nb->data, ns).set_nritems(v.nritems());
  if (level == root.level) {
    root.bytenr = nb->bytenr;
    root.generation = w.transid();
  } else {
    auto parent = mut_block(w, path.nodes[l + 1]);
    FSCTL_ASSERT(parent);
    NodeMut pm(parent->data, ns);
    pm.key_ptr(path.slots[l + 1]).blockptr.set(nb->bytenr);
    pm.key_ptr(path.slots[l + 1]).generation.set(w.transid());
  }
  FSCTL_TRY(w.free_tree_block(b->bytenr, root.root_id, v.level()));
  path.nodes[l] = nb;
  return {};
}

// Puts a new root one level above the current root, with one pointer to it.
Status grow_root(TreeWriter& w, WriteRoot& root, Path& path) {
  std::size_t top = root.level;
  if (top + 1 >= MAX_LEVEL) return make_error(Errc::unsupported, "tree " + std::to_string(root.root_id) + " would exceed 8 levels");
  FSCTL_TRY_ASSIGN(auto nr, w.alloc_tree_block(root.root_id, static_cast<u8>(top + 1)));
  NodeView child = path.nodes[top]->view();
  Key k = child.nritems() ? child.key(0) : Key{};
  NodeMut(nr->data, w.nodesize()).node_insert(0, k, path.nodes[top]->bytenr, w.transid());
  path.nodes[top + 1] = nr;
  path.slots[top + 1] = 0;
  root.bytenr = nr->bytenr;
  root.level = static_cast<u8>(top + 1);
  root.generation = w.transid();
  return {};
}

// After the first key of path.nodes[level] changed, fixes the parents' keys.
void fixup_low_keys(TreeWriter& w, Path& path, int level, const Key& key) {
  for (std::size_t l = static_cast<std::size_t>(level) + 1; l < MAX_LEVEL && path.nodes[l]; ++l) {
    auto m = mut_block(w, path.nodes[l]);
    NodeMut(m->data, w.nodesize()).set_key(path.slots[l], key);
    if (path.slots[l] != 0) break;
  }
}

// Splits the full node at `level` in two halves; the path follows `key`.
Status split_node(TreeWriter& w, WriteRoot& root, Path& path, int level, const Key& key) {
  std::size_t l = static_cast<std::size_t>(level);
  if (level == root.level) FSCTL_TRY(grow_root(w, root, path));
  u32 ns = w.nodesize();
  auto node = mut_block(w, path.nodes[l]);
  NodeMut nm(node->data, ns);
  u32 n = nm.nritems();
  u32 mid = n / 2;
  FSCTL_TRY_ASSIGN(auto right, w.alloc_tree_block(root.root_id, static_cast<u8>(level)));
  NodeMut rm(right->data, ns);
  std::memcpy(&rm.key_ptr(0), &nm.key_ptr(mid), (n - mid) * sizeof(KeyPtr));
  rm.set_nritems(n - mid);
  nm.set_nritems(mid);
  auto parent = mut_block(w, path.nodes[l + 1]);
  NodeMut(parent->data, ns).node_insert(path.slots[l + 1] + 1, rm.view().key(0), right->bytenr, w.transid());
  if (!(key < rm.view().key(0))) {
    path.nodes[l] = right;
    path.slots[l + 1]++;
  }
  return {};
}

// Moves items [mid, n) of the leaf at the path into a new right sibling and
// links it after the leaf. The path follows the target (a new item about to be
// inserted at slots[0], or the existing item at slots[0]) to the right when
// `target_right`. `key` is the new item's key: the right leaf's key when it
// starts empty (mid == n, the new item alone on the right).
Status split_leaf_at(TreeWriter& w, WriteRoot& root, Path& path, const Key& key, u32 mid, bool target_right) {
  u32 ns = w.nodesize();
  u32 data_size = leaf_data_size(ns);
  if (root.level == 0) FSCTL_TRY(grow_root(w, root, path));
  auto leaf = mut_block(w, path.nodes[0]);
  NodeMut lm(leaf->data, ns);
  NodeView lv = lm.view();
  u32 n = lv.nritems();
  u32 slot = path.slots[0];
  FSCTL_TRY_ASSIGN(auto right, w.alloc_tree_block(root.root_id, 0));
  NodeMut rm(right->data, ns);
  u32 top = mid == 0 ? data_size : lv.item_offset(mid - 1);
  u32 low = n > mid ? lv.item_offset(n - 1) : top;
  u32 delta = data_size - top;
  std::memcpy(rm.leaf_data() + low + delta, lm.leaf_data() + low, top - low);
  for (u32 i = mid; i < n; ++i) {
    Item& it = rm.item(i - mid);
    it = lm.item(i);
    it.offset.set(it.offset.get() + delta);
  }
  rm.set_nritems(n - mid);
  lm.set_nritems(mid);
  Key right_key = n > mid ? rm.view().item_key(0) : key;
  auto parent = mut_block(w, path.nodes[1]);
  NodeMut(parent->data, ns).node_insert(path.slots[1] + 1, right_key, right->bytenr, w.transid());
  if (target_right) {
    path.nodes[0] = right;
    path.slots[0] = slot - mid;
    path.slots[1]++;
  }
  return {};
}

// Splits the leaf at the path so that `need` more bytes fit for the target at
// slots[0]: a new item of `need` bytes (header included) inserted there, or,
// with `extend`, the existing item there growing by `need` (kernel
// split_leaf). One split when a split point gives the target's side room;
// otherwise the target is first cut off from the items before it and then,
// in a second split, from the items after it, so it ends alone in a leaf
// (the kernel's double split). REQUIRES: parent with room for two pointers
// (search_slot_for_write splits nodes with fewer than two free slots).
Status split_leaf(TreeWriter& w, WriteRoot& root, Path& path, const Key& key, u32 need, bool extend) {
  u32 ns = w.nodesize();
  u32 data_size = leaf_data_size(ns);
  for (int round = 0; round < 3; ++round) {
    NodeView lv = path.nodes[0]->view();
    u32 n = lv.nritems();
    u32 slot = path.slots[0];
    if (NodeMut(mut_block(w, path.nodes[0])->data, ns).leaf_free_space() >= need) return {};
    auto used = [&](u32 a, u32 b) {  // bytes of items [a, b) incl. headers
      u32 s = 0;
      for (u32 i = a; i < b; ++i) s += lv.item_size(i) + static_cast<u32>(sizeof(Item));
      return s;
    };
    // Split points: mid = first item of the right leaf; the target goes
    // right when `to_right`. An existing item is on the right iff slot >= mid;
    // a new item at slot == mid may go either way. Halves first, then cuts at
    // the target.
    struct Cand {
      u32 mid;
      bool to_right;
    };
    std::vector<Cand> cands;
    u32 half = (n + 1) / 2;
    cands.push_back({half, extend ? slot >= half : slot >= half});
    if (extend) {
      if (slot + 1 < n) cands.push_back({slot + 1, false});  // target last on the left
      if (slot > 0) cands.push_back({slot, true});           // target first on the right
    } else {
      cands.push_back({slot, true});   // new item first on the right
      cands.push_back({slot, false});  // new item last on the left
    }
    for (const Cand& c : cands) {
      if (c.mid > n) continue;
      u32 items_left = c.mid, items_right = n - c.mid;
      if (!extend) (c.to_right ? items_right : items_left)++;
      if (items_left == 0 || items_right == 0) continue;  // a split must leave both leaves with an item
      u32 side = c.to_right ? used(c.mid, n) : used(0, c.mid);
      if (side + need <= data_size) return split_leaf_at(w, root, path, key, c.mid, c.to_right);
    }
    // No single split gives room: cut the target off from the items before
    // it (or, at slot 0, an existing item from those after it) and retry.
    if (slot > 0)
      FSCTL_TRY(split_leaf_at(w, root, path, key, slot, true));
    else if (extend && n > 1)
      FSCTL_TRY(split_leaf_at(w, root, path, key, 1, false));
    else
      break;
  }
  return make_error(Errc::invalid_argument, "cannot split leaf " + std::to_string(path.nodes[0]->bytenr) + " to fit " +
                                                std::to_string(need) + " more bytes");
}

}  // namespace

Result<bool> search_slot_for_write(TreeWriter& w, WriteRoot& root, const Key& key, u32 ins_len, Path& path) {
  path.release();
  path.root = root.ref();
  ParentCheck rc;
  rc.transid = root.generation;
  rc.level = root.level;
  FSCTL_TRY_ASSIGN(path.nodes[root.level], w.read_tree_block(root.bytenr, rc));
  FSCTL_TRY(cow_at(w, root, path, root.level));
  u32 ns = w.nodesize();
  for (int level = root.level;; --level) {
    std::size_t l = static_cast<std::size_t>(level);
    if (level > 0) {
      if (ins_len > 0 && path.nodes[l]->view().nritems() >= node_max_ptrs(ns) - 1) {
        FSCTL_TRY(split_node(w, root, path, level, key));
      }
      NodeView v = path.nodes[l]->view();
      bool exact = false;
      u32 slot = bin_search(v, key, exact);
      if (!exact && slot > 0) --slot;
      path.slots[l] = slot;
      FSCTL_TRY_ASSIGN(path.nodes[l - 1], w.read_tree_block(v.blockptr(slot), child_check(v, slot)));
      FSCTL_TRY(cow_at(w, root, path, level - 1));
      continue;
    }
    NodeView v = path.nodes[0]->view();
    bool exact = false;
    path.slots[0] = bin_search(v, key, exact);
    // An existing key with ins_len > 0 is an item about to grow by ins_len
    // (resize_item); a missing one is an insertion of ins_len bytes.
    if (ins_len > 0) {
      if (ins_len > leaf_data_size(ns) - (exact ? v.item_size(path.slots[0]) + static_cast<u32>(sizeof(Item)) : 0))
        return make_error(Errc::invalid_argument, std::string(exact ? "growing item " : "inserting item ") + key_to_string(key) + " by " +
                                                      std::to_string(ins_len) + " bytes exceeds the leaf size");
      auto leaf = mut_block(w, path.nodes[0]);
      if (NodeMut(leaf->data, ns).leaf_free_space() < ins_len) FSCTL_TRY(split_leaf(w, root, path, key, ins_len, exact));
    }
    return exact;
  }
}

Status insert_empty_item(TreeWriter& w, WriteRoot& root, const Key& key, u32 size, Path& path) {
  FSCTL_TRY_ASSIGN(bool exact, search_slot_for_write(w, root, key, size + static_cast<u32>(sizeof(Item)), path));
  if (exact) return make_error(Errc::invalid_argument, "item " + key_to_string(key) + " already exists in tree " + std::to_string(root.root_id));
  auto leaf = mut_block(w, path.nodes[0]);
  NodeMut lm(leaf->data, w.nodesize());
  if (lm.leaf_free_space() < size + sizeof(Item))
    return make_error(Errc::invalid_argument, "item of " + std::to_string(size) + " bytes does not fit leaf " + std::to_string(leaf->bytenr));
  lm.leaf_insert(path.slots[0], key, size);
  if (path.slots[0] == 0) fixup_low_keys(w, path, 0, key);
  return {};
}

Status insert_item(TreeWriter& w, WriteRoot& root, const Key& key, std::span<const u8> data) {
  Path path;
  FSCTL_TRY(insert_empty_item(w, root, key, static_cast<u32>(data.size()), path));
  auto dst = item_data_mut(w, path);
  // memcpy from the null pointer of an empty span (FREE_SPACE_EXTENT items
  // have no data) is undefined even for 0 bytes.
  if (!data.empty()) std::memcpy(dst.data(), data.data(), data.size());
  return {};
}

std::span<u8> item_data_mut(TreeWriter& w, const Path& path) {
  auto leaf = mut_block(w, path.nodes[0]);
  FSCTL_ASSERT(leaf);
  return NodeMut(leaf->data, w.nodesize()).item_data(path.slots[0]);
}

Status resize_item(TreeWriter& w, Path& path, u32 new_size) {
  auto leaf = mut_block(w, path.nodes[0]);
  FSCTL_ASSERT(leaf);
  NodeMut lm(leaf->data, w.nodesize());
  u32 old = lm.view().item_size(path.slots[0]);
  if (new_size > old && lm.leaf_free_space() < new_size - old)
    return make_error(Errc::invalid_argument, "item grows by " + std::to_string(new_size - old) + " bytes beyond leaf " + std::to_string(leaf->bytenr));
  lm.leaf_resize(path.slots[0], new_size);
  return {};
}

Status delete_item(TreeWriter& w, WriteRoot& root, Path& path) {
  u32 ns = w.nodesize();
  auto leaf = mut_block(w, path.nodes[0]);
  FSCTL_ASSERT(leaf);
  NodeMut lm(leaf->data, ns);
  u32 slot = path.slots[0];
  lm.leaf_delete(slot);
  if (lm.nritems() > 0 || root.level == 0) {
    if (slot == 0 && lm.nritems() > 0) fixup_low_keys(w, path, 0, lm.view().item_key(0));
    path.release();
    return {};
  }
  // The leaf is empty: unlink it, and every ancestor that becomes empty.
  for (int level = 0; level < root.level; ++level) {
    std::size_t l = static_cast<std::size_t>(level);
    auto blk = path.nodes[l];
    FSCTL_TRY(w.free_tree_block(blk->bytenr, root.root_id, static_cast<u8>(level)));
    auto parent = mut_block(w, path.nodes[l + 1]);
    NodeMut pm(parent->data, ns);
    u32 ps = path.slots[l + 1];
    pm.node_delete(ps);
    if (pm.nritems() > 0) {
      if (ps == 0) fixup_low_keys(w, path, level + 1, pm.view().node_key(0));
      path.release();
      return {};
    }
    if (level + 1 == root.level) {
      // The whole tree emptied: the root becomes an empty leaf.
      FSCTL_TRY(w.free_tree_block(parent->bytenr, root.root_id, root.level));
      FSCTL_TRY_ASSIGN(auto nl, w.alloc_tree_block(root.root_id, 0));
      root.bytenr = nl->bytenr;
      root.level = 0;
      root.generation = w.transid();
      path.release();
      return {};
    }
  }
  path.release();
  return {};
}

}  // namespace fsctl::ctree
