// SPDX-License-Identifier: GPL-2.0-only
// search_slot and neighbours. Every child read passes the parent's pointer
// generation, the level below and the pointer key as ParentCheck, so a bad or
// cyclic pointer is caught at the block it points to.
#include "lib/ctree/search.h"

#include <algorithm>

namespace fsctl::ctree {
using namespace fsctl::format;

u32 bin_search(const NodeView& v, const Key& key, bool& exact) {
  u32 lo = 0, hi = v.nritems();
  while (lo < hi) {
    u32 mid = lo + (hi - lo) / 2;
    if (v.key(mid) < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  exact = lo < v.nritems() && v.key(lo) == key;
  return lo;
}

ParentCheck child_check(const NodeView& node, u32 slot) {
  ParentCheck c;
  c.transid = node.ptr_generation(slot);
  c.level = node.level() - 1;
  c.first_key = node.node_key(slot);
  return c;
}

namespace {

Result<cache::TreeBlockRef> read_child(BlockSource& src, const cache::TreeBlockRef& parent, u32 slot) {
  NodeView v = parent->view();
  return src.read_tree_block(v.blockptr(slot), child_check(v, slot));
}

// Descend from nodes[level] (slot set) to the leftmost (or rightmost) leaf.
Status descend(BlockSource& src, Path& path, int level, bool rightmost) {
  for (int l = level; l > 0; --l) {
    FSCTL_TRY_ASSIGN(auto child, read_child(src, path.nodes[static_cast<std::size_t>(l)], path.slots[static_cast<std::size_t>(l)]));
    std::size_t cl = static_cast<std::size_t>(l - 1);
    u32 n = child->view().nritems();
    path.nodes[cl] = std::move(child);
    path.slots[cl] = rightmost ? (n ? n - 1 : 0) : 0;
  }
  return {};
}

}  // namespace

Result<bool> search_slot(BlockSource& src, const RootRef& root, const Key& key, Path& path) {
  path.release();
  path.root = root;
  ParentCheck rc;
  rc.transid = root.generation;
  rc.level = root.level;
  FSCTL_TRY_ASSIGN(auto block, src.read_tree_block(root.bytenr, rc));
  for (;;) {
    NodeView v = block->view();
    std::size_t l = v.level();
    bool exact = false;
    u32 slot = bin_search(v, key, exact);
    if (v.is_leaf()) {
      path.nodes[0] = std::move(block);
      path.slots[0] = slot;
      return exact;
    }
    // In a node, follow the last pointer whose key is <= key.
    if (!exact && slot > 0) --slot;
    path.nodes[l] = block;
    path.slots[l] = slot;
    FSCTL_TRY_ASSIGN(block, read_child(src, path.nodes[l], slot));
  }
}

Result<bool> next_leaf(BlockSource& src, Path& path) {
  for (std::size_t l = 1; l < MAX_LEVEL && path.nodes[l]; ++l) {
    if (path.slots[l] + 1 < path.nodes[l]->view().nritems()) {
      path.slots[l]++;
      FSCTL_TRY(descend(src, path, static_cast<int>(l), false));
      return true;
    }
  }
  return false;
}

Result<bool> prev_leaf(BlockSource& src, Path& path) {
  for (std::size_t l = 1; l < MAX_LEVEL && path.nodes[l]; ++l) {
    if (path.slots[l] > 0) {
      path.slots[l]--;
      FSCTL_TRY(descend(src, path, static_cast<int>(l), true));
      return true;
    }
  }
  return false;
}

Result<bool> normalize(BlockSource& src, Path& path) {
  while (!path.at_item()) {
    if (!path.nodes[0]) return false;
    FSCTL_TRY_ASSIGN(bool more, next_leaf(src, path));
    if (!more) return false;
  }
  return true;
}

Result<bool> next_item(BlockSource& src, Path& path) {
  path.slots[0]++;
  return normalize(src, path);
}

Result<bool> prev_item(BlockSource& src, Path& path) {
  if (path.slots[0] > 0) {
    path.slots[0]--;
    return true;
  }
  for (;;) {
    FSCTL_TRY_ASSIGN(bool more, prev_leaf(src, path));
    if (!more) return false;
    if (path.at_item()) return true;
  }
}

Result<std::optional<std::vector<u8>>> lookup_item(BlockSource& src, const RootRef& root, const Key& key) {
  Path path;
  FSCTL_TRY_ASSIGN(bool exact, search_slot(src, root, key, path));
  if (!exact) return std::optional<std::vector<u8>>{};
  auto d = path.item_data();
  return std::optional<std::vector<u8>>(std::vector<u8>(d.begin(), d.end()));
}

namespace {

/// Read-ahead state of one scan: the parent node whose children up to slot
/// `until` (exclusive) were already asked for.
struct SiblingReadAhead {
  u64 parent = 0;
  u32 until = 0;

  /// When the path's leaf is at or past what was read ahead, reads the next
  /// FOR_EACH_READ_AHEAD leaves under its parent whose first key is at most
  /// `max` into the cache. Best effort: a read error is left for the search
  /// that reaches the block to report.
  void maybe_read(BlockSource& src, const Path& path, const Key& max) {
    if (path.root.level == 0 || !path.nodes[1]) return;
    const cache::TreeBlockRef& node = path.nodes[1];
    u32 slot = path.slots[1];
    if (node->bytenr == parent && slot + 1 < until) return;
    NodeView v = node->view();
    std::vector<BlockRequest> reqs;
    u32 end = std::min<u32>(v.nritems(), slot + 1 + FOR_EACH_READ_AHEAD);
    u32 k = slot + 1;
    for (; k < end && !(max < v.node_key(k)); ++k) reqs.push_back({v.blockptr(k), child_check(v, k)});
    parent = node->bytenr;
    until = k;
    if (reqs.size() < 2) return;  // one block: the search reads it as soon
    (void)src.read_tree_blocks(std::move(reqs), [](const cache::TreeBlockRef&) -> Status { return {}; }, true);
  }
};

}  // namespace

Status for_each_item(BlockSource& src, const RootRef& root, const KeyRange& range,
                     const std::function<Result<Visit>(const NodeView&, u32)>& visit) {
  Path path;
  FSCTL_TRY(search_slot(src, root, range.min, path));
  SiblingReadAhead ahead;
  ahead.maybe_read(src, path, range.max);
  FSCTL_TRY_ASSIGN(bool ok, normalize(src, path));
  while (ok) {
    if (range.max < path.key()) break;
    FSCTL_TRY_ASSIGN(Visit v, visit(path.leaf_view(), path.slots[0]));
    if (v == Visit::stop) break;
    u64 leaf = path.nodes[0]->bytenr;
    FSCTL_TRY_ASSIGN(ok, next_item(src, path));
    if (ok && path.nodes[0]->bytenr != leaf) ahead.maybe_read(src, path, range.max);
  }
  return {};
}

void prefetch_search_paths(BlockSource& src, const RootRef& root, std::span<const Key> keys) {
  if (keys.empty() || root.level == 0) return;
  ParentCheck rc;
  rc.transid = root.generation;
  rc.level = root.level;
  auto top = src.read_tree_block(root.bytenr, rc);
  if (!top) return;
  std::vector<cache::TreeBlockRef> nodes{*top};  // this level's nodes on the paths, in key order
  for (int level = root.level; level >= 1; --level) {
    std::vector<BlockRequest> reqs;
    std::size_t n = 0;
    for (const Key& key : keys) {
      // The node whose range holds `key`: the last one whose first key is <= key.
      while (n + 1 < nodes.size() && !(key < nodes[n + 1]->view().key(0))) ++n;
      NodeView v = nodes[n]->view();
      if (v.nritems() == 0) continue;
      bool exact = false;
      u32 slot = bin_search(v, key, exact);
      if (!exact && slot > 0) --slot;  // as search_slot
      u64 child = v.blockptr(slot);
      if (!reqs.empty() && reqs.back().bytenr == child) continue;
      reqs.push_back({child, child_check(v, slot)});
    }
    std::vector<cache::TreeBlockRef> next;
    auto st = src.read_tree_blocks(
        std::move(reqs),
        [&](const cache::TreeBlockRef& b) -> Status {
          if (level > 1 && b->view().nritems() > 0) next.push_back(b);
          return {};
        },
        true);
    if (!st || level == 1) return;
    // read_tree_blocks visits in physical order; the walk needs key order.
    std::sort(next.begin(), next.end(),
              [](const cache::TreeBlockRef& a, const cache::TreeBlockRef& b) { return a->view().key(0) < b->view().key(0); });
    nodes = std::move(next);
  }
}

}  // namespace fsctl::ctree
