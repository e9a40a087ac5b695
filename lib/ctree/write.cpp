// SPDX-License-Identifier: GPL-2.0-only
// Copy-on-write search, insert, delete, split, push and merge (kernel
// ctree.c btrfs_search_slot with a transaction, split_leaf, push_leaf_right,
// push_leaf_left, split_node, push_nodes_for_insert, btrfs_del_items,
// balance_level, insert_ptr, del_ptr, fixup_low_keys). Only unshared trees
// are modified: a block owned by another root is refused (relocation of
// shared trees is a later issue). Every block changed, a sibling included,
// is copied once per transaction and freed through the TreeWriter.
#include "lib/ctree/write.h"

#include "lib/ctree/search.h"

#include <cstring>

#include "lib/base/assert.h"

namespace fsctl::ctree {
using namespace fsctl::format;

namespace {

using BlockPtr = std::shared_ptr<cache::TreeBlock>;
constexpr u32 ITEM_SIZE = static_cast<u32>(sizeof(Item));

BlockPtr mut_block(TreeWriter& w, const cache::TreeBlockRef& b) { return w.dirty_block(b); }

// Copies block `b` of `root` into the transaction unless already done and
// points `parent` (dirty; slot `pslot`) or, without a parent, the root at
// the copy. Returns the mutable block.
Result<BlockPtr> cow_block(TreeWriter& w, WriteRoot& root, const cache::TreeBlockRef& b, const BlockPtr& parent, u32 pslot) {
  if (auto d = w.dirty_block(b)) return d;
  NodeView v = b->view();
  if (v.owner() != root.root_id)
    return make_error(Errc::unsupported, "tree block " + std::to_string(b->bytenr) + " of tree " +
                                             std::to_string(root.root_id) + " is owned by " + std::to_string(v.owner()) +
                                             " (shared); copying shared blocks is not supported");
  FSCTL_TRY_ASSIGN(auto nb, w.alloc_tree_block(root.root_id, v.level()));
  u32 ns = w.nodesize();
  std::memcpy(nb->data.data() + sizeof(Header), b->data.data() + sizeof(Header), ns - sizeof(Header));
  NodeMut(nb->data, ns).set_nritems(v.nritems());
  if (!parent) {
    root.bytenr = nb->bytenr;
    root.generation = w.transid();
  } else {
    NodeMut pm(parent->data, ns);
    pm.key_ptr(pslot).blockptr.set(nb->bytenr);
    pm.key_ptr(pslot).generation.set(w.transid());
  }
  FSCTL_TRY(w.free_tree_block(b->bytenr, root.root_id, v.level()));
  return nb;
}

// Copies path.nodes[level] into the transaction unless already done, and
// points its parent (or the root) at the copy.
Status cow_at(TreeWriter& w, WriteRoot& root, Path& path, int level) {
  std::size_t l = static_cast<std::size_t>(level);
  BlockPtr parent;
  if (level != root.level) {
    parent = mut_block(w, path.nodes[l + 1]);
    FSCTL_ASSERT(parent);
  }
  FSCTL_TRY_ASSIGN(auto nb, cow_block(w, root, path.nodes[l], parent, level == root.level ? 0 : path.slots[l + 1]));
  path.nodes[l] = nb;
  return {};
}

// The child at `slot` of the dirty node `parent`, read with the pointer's
// checks (not copied).
Result<cache::TreeBlockRef> read_child(TreeWriter& w, const BlockPtr& parent, u32 slot) {
  NodeView pv = parent->view();
  return w.read_tree_block(pv.blockptr(slot), child_check(pv, slot));
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
  root.stats.root_grows++;
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

// Sets the key of pointer `slot` of the dirty node path.nodes[level]; a new
// first key goes on up to the ancestors.
void set_ptr_key(TreeWriter& w, Path& path, int level, u32 slot, const Key& key) {
  auto m = mut_block(w, path.nodes[static_cast<std::size_t>(level)]);
  NodeMut(m->data, w.nodesize()).set_key(slot, key);
  if (slot == 0) fixup_low_keys(w, path, level, key);
}

// Removes pointer `slot` of the dirty node path.nodes[level] (kernel
// del_ptr); a new first key goes on up.
void remove_ptr(TreeWriter& w, Path& path, int level, u32 slot) {
  auto m = mut_block(w, path.nodes[static_cast<std::size_t>(level)]);
  NodeMut nm(m->data, w.nodesize());
  nm.node_delete(slot);
  if (slot == 0 && nm.nritems() > 0) fixup_low_keys(w, path, level, nm.view().node_key(0));
}

// A node splits when an insertion passes it with fewer than two free
// pointer slots (a double leaf split adds two pointers to the parent).
u32 split_threshold(u32 ns) { return node_max_ptrs(ns) - 1; }

// Moves of key pointers between siblings (pushes before a split, merges
// after deletions) never leave a node with more than this many pointers, a
// quarter of a node below the split threshold, and a node that pushes to
// avoid a split ends at most here too. So a node reaches the split
// threshold again only after a quarter node of new pointers arrived from
// splits below it: the reservation bounds node splits by that (unlike the
// kernel, whose pushes may fill a sibling to the brim).
u32 node_fill_limit(u32 ns) { return split_threshold(ns) - node_max_ptrs(ns) / 4; }

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
  node_move_to_right(nm, rm, n - mid);
  auto parent = mut_block(w, path.nodes[l + 1]);
  NodeMut(parent->data, ns).node_insert(path.slots[l + 1] + 1, rm.view().key(0), right->bytenr, w.transid());
  if (!(key < rm.view().key(0))) {
    path.nodes[l] = right;
    path.slots[l + 1]++;
  }
  root.stats.splits[l]++;
  return {};
}

// Before splitting the full non-root node at `level`, moves key pointers
// into a sibling under the same parent (kernel push_nodes_for_insert): to
// the left one (push_node_left: all but 8 of the node's pointers, as far as
// the sibling takes them), else to the right one (balance_node_right: at
// most half plus one). Both nodes must end at most at node_fill_limit, else
// the node is split. The path follows `key`. Returns whether pointers moved.
Result<bool> push_nodes_for_insert(TreeWriter& w, WriteRoot& root, Path& path, int level, const Key& key) {
  std::size_t l = static_cast<std::size_t>(level);
  u32 ns = w.nodesize();
  u32 limit = node_fill_limit(ns);
  auto parent = mut_block(w, path.nodes[l + 1]);
  u32 pslot = path.slots[l + 1];
  auto mid = mut_block(w, path.nodes[l]);
  NodeMut mm(mid->data, ns);
  u32 n = mm.nritems();
  if (pslot > 0) {
    FSCTL_TRY_ASSIGN(auto left, read_child(w, parent, pslot - 1));
    u32 ln = left->view().nritems();
    u32 push = n > 8 && ln < limit ? std::min(n - 8, limit - ln) : 0;
    if (push > 0 && n - push <= limit) {
      FSCTL_TRY_ASSIGN(auto lb, cow_block(w, root, left, parent, pslot - 1));
      NodeMut lm(lb->data, ns);
      node_move_to_left(lm, mm, push);
      set_ptr_key(w, path, level + 1, pslot, mm.view().node_key(0));
      if (key < mm.view().node_key(0)) {
        path.nodes[l] = lb;
        path.slots[l + 1]--;
      }
      root.stats.pushes[l]++;
      return true;
    }
  }
  if (pslot + 1 < parent->view().nritems()) {
    FSCTL_TRY_ASSIGN(auto right, read_child(w, parent, pslot + 1));
    u32 rn = right->view().nritems();
    u32 max_push = n / 2 + 1;
    u32 push = n >= 4 && max_push < n && rn < limit ? std::min(max_push, limit - rn) : 0;
    if (push > 0 && n - push <= limit) {
      FSCTL_TRY_ASSIGN(auto rb, cow_block(w, root, right, parent, pslot + 1));
      NodeMut rm(rb->data, ns);
      node_move_to_right(mm, rm, push);
      set_ptr_key(w, path, level + 1, pslot + 1, rm.view().node_key(0));
      if (!(key < rm.view().node_key(0))) {
        path.nodes[l] = rb;
        path.slots[l + 1]++;
      }
      root.stats.pushes[l]++;
      return true;
    }
  }
  return false;
}

// Moves items [mid, n) of the leaf at the path into a new right sibling and
// links it after the leaf. The path follows the target (a new item about to be
// inserted at slots[0], or the existing item at slots[0]) to the right when
// `target_right`. `key` is the new item's key: the right leaf's key when it
// starts empty (mid == n, the new item alone on the right).
Status split_leaf_at(TreeWriter& w, WriteRoot& root, Path& path, const Key& key, u32 mid, bool target_right) {
  u32 ns = w.nodesize();
  if (root.level == 0) FSCTL_TRY(grow_root(w, root, path));
  auto leaf = mut_block(w, path.nodes[0]);
  NodeMut lm(leaf->data, ns);
  u32 n = lm.nritems();
  u32 slot = path.slots[0];
  FSCTL_TRY_ASSIGN(auto right, w.alloc_tree_block(root.root_id, 0));
  NodeMut rm(right->data, ns);
  leaf_move_to_right(lm, rm, n - mid);
  Key right_key = n > mid ? rm.view().item_key(0) : key;
  auto parent = mut_block(w, path.nodes[1]);
  NodeMut(parent->data, ns).node_insert(path.slots[1] + 1, right_key, right->bytenr, w.transid());
  if (target_right) {
    path.nodes[0] = right;
    path.slots[0] = slot - mid;
    path.slots[1]++;
  }
  root.stats.splits[0]++;
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
    cands.push_back({half, slot >= half});
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
      u32 side = c.to_right ? lv.leaf_space_used(c.mid, n) : lv.leaf_space_used(0, c.mid);
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

// The target of an insertion: the slot of a new item about to be inserted
// or, with `extend`, of an existing item about to grow, and the bytes it
// needs (item header included for a new item).
struct Target {
  u32 slot;
  u32 need;
  bool extend;
};

// Items at the end of leaf `lv` to move into its right sibling, which has
// `right_free` bytes, to make room for `t` (kernel __push_leaf_right without
// `empty`): only items at or after the target, at least one item stays, and
// the target itself (with its bytes) moves only while that does not leave
// the right sibling fuller than the leaf (the kernel's free(left) +
// 2 * pushed <= free(right) test).
u32 count_push_right(const NodeView& lv, u32 left_free, u32 right_free, const Target& t) {
  u32 n = lv.nritems();
  u32 push = 0, bytes = 0;
  for (u32 i = n - 1; i >= 1; --i) {
    if (push > 0) {
      if (t.slot > i) break;
      if (t.slot == i && left_free + 2 * bytes > right_free) break;
    }
    u32 add = lv.item_size(i) + ITEM_SIZE + (t.slot == i ? t.need : 0);
    if (bytes + add > right_free) break;
    push++;
    bytes += add;
  }
  return push;
}

// Items at the start of leaf `lv` to move into its left sibling with
// `left_free` bytes (kernel __push_leaf_left without `empty`): the mirror
// image of count_push_right.
u32 count_push_left(const NodeView& lv, u32 leaf_free, u32 left_free, const Target& t) {
  u32 n = lv.nritems();
  u32 push = 0, bytes = 0;
  for (u32 i = 0; i + 1 < n; ++i) {
    if (push > 0) {
      if (t.slot < i) break;
      if (t.slot == i && leaf_free + 2 * bytes > left_free) break;
    }
    u32 add = lv.item_size(i) + ITEM_SIZE + (t.slot == i ? t.need : 0);
    if (bytes + add > left_free) break;
    push++;
    bytes += add;
  }
  return push;
}

// Before splitting the leaf at the path for `t`, moves items into its
// siblings under the same parent (kernel split_leaf: push_leaf_right, then
// push_leaf_left): a new item past the leaf's last one goes first into the
// right sibling when that has room, without moving anything. A sibling is
// copied only when items move into it. The path follows the target.
// Returns whether the target's leaf now has room.
Result<bool> push_leaf_for_insert(TreeWriter& w, WriteRoot& root, Path& path, const Target& t) {
  if (root.level == 0) return false;
  u32 ns = w.nodesize();
  auto parent = mut_block(w, path.nodes[1]);
  u32 pslot = path.slots[1];
  auto leaf = mut_block(w, path.nodes[0]);
  NodeMut lm(leaf->data, ns);
  u32 n = lm.nritems();
  u32 slot = path.slots[0];
  if (n == 0) return false;
  auto room = [&]() { return path.nodes[0]->view().leaf_free_space() >= t.need; };
  if (pslot + 1 < parent->view().nritems()) {
    FSCTL_TRY_ASSIGN(auto right, read_child(w, parent, pslot + 1));
    NodeView rv = right->view();
    u32 right_free = rv.leaf_free_space();
    u32 want = slot < n ? t.need - std::min(t.need, lm.leaf_free_space()) : t.need;
    if (right_free >= want) {
      if (!t.extend && slot == n) {
        // An append: the new item becomes the right sibling's first one.
        FSCTL_TRY_ASSIGN(auto rb, cow_block(w, root, right, parent, pslot + 1));
        path.nodes[0] = rb;
        path.slots[0] = 0;
        path.slots[1]++;
        root.stats.pushes[0]++;
        return true;
      }
      u32 push = count_push_right(lm.view(), lm.leaf_free_space(), right_free, t);
      if (push > 0) {
        FSCTL_TRY_ASSIGN(auto rb, cow_block(w, root, right, parent, pslot + 1));
        NodeMut rm(rb->data, ns);
        leaf_move_to_right(lm, rm, push);
        set_ptr_key(w, path, 1, pslot + 1, rm.view().item_key(0));
        root.stats.pushes[0]++;
        if (slot >= n - push) {
          path.nodes[0] = rb;
          path.slots[0] = slot - (n - push);
          path.slots[1]++;
        }
        if (room()) return true;
      }
    }
  }
  if (pslot > 0 && path.nodes[0]->bytenr == leaf->bytenr) {
    FSCTL_TRY_ASSIGN(auto left, read_child(w, parent, pslot - 1));
    NodeView lv = left->view();
    u32 left_free = lv.leaf_free_space();
    u32 want = slot > 0 ? t.need - std::min(t.need, lm.leaf_free_space()) : t.need;
    if (left_free >= want) {
      u32 push = count_push_left(lm.view(), lm.leaf_free_space(), left_free, t);
      if (push > 0) {
        FSCTL_TRY_ASSIGN(auto lb, cow_block(w, root, left, parent, pslot - 1));
        NodeMut lbm(lb->data, ns);
        u32 left_n = lbm.nritems();
        leaf_move_to_left(lbm, lm, push);
        set_ptr_key(w, path, 1, pslot, lm.view().item_key(0));
        root.stats.pushes[0]++;
        if (slot < push) {
          path.nodes[0] = lb;
          path.slots[0] = left_n + slot;
          path.slots[1]--;
        } else {
          path.slots[0] = slot - push;
        }
        if (room()) return true;
      }
    }
  }
  return false;
}

// A leaf left less than a third full by a deletion is emptied into its
// siblings under the same parent if it can be (kernel btrfs_del_items):
// first as many of its first items as the left sibling takes, then all the
// rest into the right sibling or none. The caller unlinks it when empty.
Status empty_leaf_into_siblings(TreeWriter& w, WriteRoot& root, Path& path) {
  u32 ns = w.nodesize();
  auto parent = mut_block(w, path.nodes[1]);
  u32 pslot = path.slots[1];
  auto leaf = mut_block(w, path.nodes[0]);
  NodeMut lm(leaf->data, ns);
  bool moved = false;
  if (pslot > 0) {
    FSCTL_TRY_ASSIGN(auto left, read_child(w, parent, pslot - 1));
    NodeView lv = left->view();
    u32 left_free = lv.leaf_free_space();
    u32 push = 0, bytes = 0;
    NodeView v = lm.view();
    while (push < v.nritems() && bytes + v.item_size(push) + ITEM_SIZE <= left_free) bytes += v.item_size(push++) + ITEM_SIZE;
    if (push > 0) {
      FSCTL_TRY_ASSIGN(auto lb, cow_block(w, root, left, parent, pslot - 1));
      NodeMut lbm(lb->data, ns);
      leaf_move_to_left(lbm, lm, push);
      if (lm.nritems() > 0) set_ptr_key(w, path, 1, pslot, lm.view().item_key(0));
      moved = true;
    }
  }
  u32 n = lm.nritems();
  if (n > 0 && pslot + 1 < parent->view().nritems()) {
    FSCTL_TRY_ASSIGN(auto right, read_child(w, parent, pslot + 1));
    NodeView rv = right->view();
    if (rv.leaf_free_space() >= lm.view().leaf_space_used(0, n)) {
      FSCTL_TRY_ASSIGN(auto rb, cow_block(w, root, right, parent, pslot + 1));
      NodeMut rm(rb->data, ns);
      leaf_move_to_right(lm, rm, n);
      set_ptr_key(w, path, 1, pslot + 1, rm.view().item_key(0));
      moved = true;
    }
  }
  if (lm.nritems() == 0)
    root.stats.merges[0]++;
  else if (moved)
    root.stats.pushes[0]++;
  return {};
}

// Key pointers a node with `src` of them gives to a sibling with `dst`
// (kernel push_node_left with `empty`): as many as the sibling takes up to
// `limit`, but a node that is not emptied keeps at least 8.
u32 count_node_push_empty(u32 src, u32 dst, u32 limit) {
  if (dst >= limit) return 0;
  u32 push = std::min(src, limit - dst);
  if (push < src && src - push < 8) {
    if (push <= 8) return 0;
    push -= 8;
  }
  return push;
}

// A non-root node on a deletion's path with at most a quarter of its
// pointers is merged with its siblings under the same parent (kernel
// balance_level): its pointers go into the left sibling, the right
// sibling's come into it (the right one is freed when emptied), a node left
// with one pointer takes some back from the left; a node emptied is
// unlinked and freed. No node receives beyond node_fill_limit. The path
// stays valid from level + 1 up.
Status balance_node(TreeWriter& w, WriteRoot& root, Path& path, int level) {
  std::size_t l = static_cast<std::size_t>(level);
  u32 ns = w.nodesize();
  u32 max = node_max_ptrs(ns);
  u32 limit = node_fill_limit(ns);
  auto mid = mut_block(w, path.nodes[l]);
  NodeMut mm(mid->data, ns);
  auto parent = mut_block(w, path.nodes[l + 1]);
  u32 pslot = path.slots[l + 1];
  u32 n = mm.nritems();
  if (n > max / 4) return {};
  // Decide every move from the blocks as they are, then copy the siblings
  // that change, then move: freeing a sibling's old copy may make the
  // transaction search a tree (the extent tree), which must then be whole.
  cache::TreeBlockRef left, right;
  if (pslot > 0) {
    FSCTL_TRY_ASSIGN(left, read_child(w, parent, pslot - 1));
  }
  if (pslot + 1 < parent->view().nritems()) {
    FSCTL_TRY_ASSIGN(right, read_child(w, parent, pslot + 1));
  }
  u32 ln = left ? left->view().nritems() : 0, rn = right ? right->view().nritems() : 0;
  u32 to_left = left ? count_node_push_empty(n, ln, limit) : 0;               // mid -> left
  u32 from_right = right ? count_node_push_empty(rn, n - to_left, limit) : 0;  // right -> mid
  u32 back = 0, give = 0;  // one pointer left: left -> mid, else mid -> left
  if (left && n - to_left + from_right == 1) {
    u32 lnn = ln + to_left;
    u32 max_push = lnn / 2 + 1;
    back = lnn >= 4 && max_push < lnn ? std::min(max_push, limit - 1) : 0;
    give = back == 0 && lnn < limit ? 1 : 0;
  }
  if (to_left + from_right + back + give == 0) return {};
  BlockPtr lb, rb;
  if (to_left || back || give) {
    FSCTL_TRY_ASSIGN(lb, cow_block(w, root, left, parent, pslot - 1));
  }
  if (from_right) {
    FSCTL_TRY_ASSIGN(rb, cow_block(w, root, right, parent, pslot + 1));
  }
  bool merged = false;
  if (to_left) {
    NodeMut lm(lb->data, ns);
    node_move_to_left(lm, mm, to_left);
  }
  if (from_right) {
    NodeMut rm(rb->data, ns);
    node_move_to_left(mm, rm, from_right);
    if (rm.nritems() == 0) {
      remove_ptr(w, path, level + 1, pslot + 1);
      FSCTL_TRY(w.free_tree_block(rb->bytenr, root.root_id, static_cast<u8>(level)));
      merged = true;
    } else {
      set_ptr_key(w, path, level + 1, pslot + 1, rm.view().node_key(0));
    }
  }
  if (back || give) {
    NodeMut lm(lb->data, ns);
    if (back)
      node_move_to_right(lm, mm, back);
    else
      node_move_to_left(lm, mm, 1);
  }
  if (mm.nritems() == 0) {
    remove_ptr(w, path, level + 1, pslot);
    FSCTL_TRY(w.free_tree_block(mid->bytenr, root.root_id, static_cast<u8>(level)));
    merged = true;
  } else {
    set_ptr_key(w, path, level + 1, pslot, mm.view().node_key(0));
  }
  if (merged)
    root.stats.merges[l]++;
  else
    root.stats.pushes[l]++;
  return {};
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
      if (ins_len > 0 && path.nodes[l]->view().nritems() >= split_threshold(ns)) {
        bool pushed = false;
        if (level != root.level) {
          FSCTL_TRY_ASSIGN(pushed, push_nodes_for_insert(w, root, path, level, key));
        }
        if (!pushed) FSCTL_TRY(split_node(w, root, path, level, key));
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
      if (NodeMut(leaf->data, ns).leaf_free_space() < ins_len) {
        FSCTL_TRY_ASSIGN(bool room, push_leaf_for_insert(w, root, path, Target{path.slots[0], ins_len, exact}));
        if (!room) FSCTL_TRY(split_leaf(w, root, path, key, ins_len, exact));
      }
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
  if (root.level == 0) {
    path.release();
    return {};
  }
  if (lm.nritems() > 0) {
    if (slot == 0) fixup_low_keys(w, path, 0, lm.view().item_key(0));
    // Less than a third full: try to empty it into its siblings.
    if (lm.view().leaf_space_used(0, lm.nritems()) < leaf_data_size(ns) / 3) FSCTL_TRY(empty_leaf_into_siblings(w, root, path));
  }
  if (lm.nritems() == 0) {
    remove_ptr(w, path, 1, path.slots[1]);
    FSCTL_TRY(w.free_tree_block(leaf->bytenr, root.root_id, 0));
  }
  // Nodes on the path, bottom up: unlink an emptied one, merge a sparse one.
  for (int level = 1; level < root.level; ++level) {
    std::size_t l = static_cast<std::size_t>(level);
    auto node = mut_block(w, path.nodes[l]);
    if (node->view().nritems() == 0) {
      remove_ptr(w, path, level + 1, path.slots[l + 1]);
      FSCTL_TRY(w.free_tree_block(node->bytenr, root.root_id, static_cast<u8>(level)));
      continue;
    }
    FSCTL_TRY(balance_node(w, root, path, level));
  }
  // The root: a node left without pointers means the tree emptied (it
  // becomes one empty leaf); a node with one pointer is replaced by its
  // child, level after level (kernel balance_level's promotion of the
  // child to a root).
  auto top = mut_block(w, path.nodes[root.level]);
  if (top->view().nritems() == 0) {
    FSCTL_TRY(w.free_tree_block(top->bytenr, root.root_id, root.level));
    FSCTL_TRY_ASSIGN(auto nl, w.alloc_tree_block(root.root_id, 0));
    root.bytenr = nl->bytenr;
    root.level = 0;
    root.generation = w.transid();
    root.stats.root_collapses++;
  }
  while (root.level > 0 && top->view().nritems() == 1) {
    FSCTL_TRY_ASSIGN(auto child, read_child(w, top, 0));
    FSCTL_TRY_ASSIGN(auto cb, cow_block(w, root, child, top, 0));
    FSCTL_TRY(w.free_tree_block(top->bytenr, root.root_id, root.level));
    root.bytenr = cb->bytenr;
    root.level = static_cast<u8>(root.level - 1);
    root.generation = w.transid();
    root.stats.root_collapses++;
    top = cb;
  }
  path.release();
  return {};
}

}  // namespace fsctl::ctree
