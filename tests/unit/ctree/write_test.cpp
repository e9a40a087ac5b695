// SPDX-License-Identifier: GPL-2.0-only
// B-tree write side (lib/ctree/write.cpp) over an in-memory TreeWriter:
// splits of leaves (including the double split an item near the maximum size
// needs in the middle of a full leaf), growing an item whose leaf is full,
// emptied leaves, pushes into siblings before splits (leaves and nodes),
// merges after deletions (leaves and nodes) and root collapses on trees
// built block by block, the replay that counts a plan's blocks
// (write_plan.h) against the real run, and a seeded random run against a
// std::map model with a full structural walk after every "commit" (the
// hermetic twin of tests/tools/tree_torture.cpp, which runs on real images).
#include <doctest/doctest.h>

#include <array>
#include <cstring>
#include <map>
#include <set>

#include "lib/ctree/tree_checker.h"
#include "lib/ctree/write.h"
#include "lib/ctree/write_plan.h"
#include "tests/tools/rng.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {

// Every block lives in memory; "commit" makes this transaction's blocks
// immutable and starts the next transid.
class MemWriter final : public ctree::TreeWriter {
 public:
  explicit MemWriter(u32 nodesize) : ns_(nodesize) {}
  u64 transid() const override { return transid_; }
  u32 nodesize() const override { return ns_; }
  Result<std::shared_ptr<cache::TreeBlock>> alloc_tree_block(u64 owner, u8 level) override {
    auto b = std::make_shared<cache::TreeBlock>();
    b->bytenr = next_ += ns_;
    b->data.assign(ns_, 0);
    b->dirty = true;
    Header& h = *reinterpret_cast<Header*>(b->data.data());
    h.bytenr.set(b->bytenr);
    h.generation.set(transid_);
    h.owner.set(owner);
    h.level = level;
    dirty_[b->bytenr] = b;
    blocks_[b->bytenr] = b;
    allocations++;
    return b;
  }
  Status free_tree_block(u64 bytenr, u64, u8) override {
    if (!blocks_.count(bytenr)) return make_error(Errc::corrupt, "double free of " + std::to_string(bytenr));
    if (dirty_.erase(bytenr))
      blocks_.erase(bytenr);
    else
      freed_.insert(bytenr);
    return {};
  }
  std::shared_ptr<cache::TreeBlock> dirty_block(u64 bytenr) override {
    auto it = dirty_.find(bytenr);
    return it == dirty_.end() ? nullptr : it->second;
  }
  Result<cache::TreeBlockRef> read_tree_block(u64 bytenr, const ctree::ParentCheck& check) override {
    auto it = blocks_.find(bytenr);
    if (it == blocks_.end() || freed_.count(bytenr)) return make_error(Errc::not_found, "no block " + std::to_string(bytenr));
    FSCTL_TRY(ctree::check_node_layout(it->second->data, ns_));
    FSCTL_TRY(ctree::check_parent(it->second->view(), check));
    return cache::TreeBlockRef(it->second);
  }
  Status read_tree_blocks(std::vector<ctree::BlockRequest> reqs, const std::function<Status(const cache::TreeBlockRef&)>& visit,
                          bool) override {
    for (auto& r : reqs) {
      FSCTL_TRY_ASSIGN(auto b, read_tree_block(r.bytenr, r.check));
      FSCTL_TRY(visit(b));
    }
    return {};
  }
  void commit() {
    for (u64 b : freed_) blocks_.erase(b);
    freed_.clear();
    dirty_.clear();
    transid_++;
  }
  std::size_t live_blocks() const { return blocks_.size() - freed_.size(); }
  u64 allocations = 0;

 private:
  u32 ns_;
  u64 transid_ = 10;
  u64 next_ = 1 << 20;
  std::map<u64, std::shared_ptr<cache::TreeBlock>> blocks_, dirty_;
  std::set<u64> freed_;
};

using Model = std::map<Key, std::vector<u8>>;

struct Walk {
  std::vector<std::pair<Key, std::vector<u8>>> items;
  std::size_t blocks = 0;
  std::array<std::size_t, MAX_LEVEL> per_level{};
};

void walk(MemWriter& w, u64 bytenr, const ctree::ParentCheck& c, bool is_root, Walk& out) {
  auto r = w.read_tree_block(bytenr, c);
  REQUIRE_MESSAGE(r, (r ? std::string() : r.error().message));
  auto b = *r;
  NodeView v = b->view();
  out.blocks++;
  out.per_level[v.level()]++;
  if (v.is_leaf()) {
    if (!is_root) CHECK_MESSAGE(v.nritems() > 0, "empty non-root leaf " << bytenr);
    for (u32 i = 0; i < v.nritems(); ++i) {
      auto d = v.item_data(i);
      out.items.emplace_back(v.item_key(i), std::vector<u8>(d.begin(), d.end()));
    }
    return;
  }
  for (u32 i = 0; i < v.nritems(); ++i) {
    ctree::ParentCheck cc;
    cc.level = v.level() - 1;
    cc.transid = v.ptr_generation(i);
    cc.first_key = v.node_key(i);
    walk(w, v.blockptr(i), cc, false, out);
  }
}

// Walks the whole tree with the parent checks (level, pointer generation =
// header generation, first key = pointer key), compares it with the model
// and returns the blocks per level.
std::array<std::size_t, MAX_LEVEL> check_tree(MemWriter& w, const ctree::WriteRoot& root, const Model& m) {
  ctree::ParentCheck c;
  c.level = root.level;
  c.transid = root.generation;
  Walk out;
  walk(w, root.bytenr, c, true, out);
  REQUIRE(out.items.size() == m.size());
  auto it = m.begin();
  for (auto& [k, d] : out.items) {
    REQUIRE(k == it->first);
    REQUIRE(d == it->second);
    ++it;
  }
  CHECK(out.blocks == w.live_blocks());  // nothing leaked, nothing freed twice
  return out.per_level;
}

// Trees built block by block (committed, so every change copies): a leaf of
// `items` (key objectid, size) under objectid `base`, nodes over children.
u64 make_leaf(MemWriter& w, Model& m, const std::vector<std::pair<u64, u32>>& items) {
  auto b = *w.alloc_tree_block(200, 0);
  NodeMut nm(b->data, w.nodesize());
  for (u32 i = 0; i < items.size(); ++i) {
    Key k{items[i].first, 2, 0};
    nm.leaf_insert(i, k, items[i].second);
    auto d = nm.item_data(i);
    std::memset(d.data(), static_cast<int>(items[i].first & 0xff), d.size());
    m[k] = std::vector<u8>(d.begin(), d.end());
  }
  return b->bytenr;
}
u64 make_node(MemWriter& w, u8 level, const std::vector<u64>& children) {
  auto b = *w.alloc_tree_block(200, level);
  NodeMut nm(b->data, w.nodesize());
  for (u32 i = 0; i < children.size(); ++i) {
    auto c = *w.read_tree_block(children[i], ctree::ParentCheck{});
    nm.node_insert(i, c->view().key(0), children[i], c->view().generation());
  }
  return b->bytenr;
}
ctree::WriteRoot committed_root(MemWriter& w, u64 bytenr, u8 level) {
  ctree::WriteRoot r{200, bytenr, level, w.transid()};
  w.commit();
  return r;
}
// `n` items of `size` bytes with objectids first, first + step, ...
std::vector<std::pair<u64, u32>> items_of(u64 first, u32 n, u32 size, u64 step = 1) {
  std::vector<std::pair<u64, u32>> v;
  for (u32 i = 0; i < n; ++i) v.push_back({first + i * step, size});
  return v;
}
void erase(MemWriter& w, ctree::WriteRoot& root, Model& m, const Key& k) {
  ctree::Path p;
  auto f = ctree::search_slot_for_write(w, root, k, 0, p);
  REQUIRE_MESSAGE(f, (f ? std::string() : f.error().message));
  REQUIRE(*f);
  auto s = ctree::delete_item(w, root, p);
  REQUIRE_MESSAGE(s, (s ? std::string() : s.error().message));
  m.erase(k);
}

using fsctl::testing::Rng;

ctree::WriteRoot new_tree(MemWriter& w) {
  auto leaf = w.alloc_tree_block(200, 0);
  REQUIRE(leaf);
  return ctree::WriteRoot{200, (*leaf)->bytenr, 0, w.transid()};
}

void insert(MemWriter& w, ctree::WriteRoot& root, Model& m, const Key& k, u32 size, u8 fill) {
  ctree::Path p;
  auto s = ctree::insert_empty_item(w, root, k, size, p);
  REQUIRE_MESSAGE(s, (s ? std::string() : s.error().message));
  auto d = ctree::item_data_mut(w, p);
  REQUIRE(d.size() == size);
  std::memset(d.data(), fill, size);
  m[k] = std::vector<u8>(size, fill);
}

void resize(MemWriter& w, ctree::WriteRoot& root, Model& m, const Key& k, u32 size) {
  u32 old = static_cast<u32>(m.at(k).size());
  ctree::Path p;
  auto found = ctree::search_slot_for_write(w, root, k, size > old ? size - old : 0, p);
  REQUIRE_MESSAGE(found, (found ? std::string() : found.error().message));
  REQUIRE(*found);
  auto s = ctree::resize_item(w, p, size);
  REQUIRE_MESSAGE(s, (s ? std::string() : s.error().message));
  m[k].resize(size, 0);
  REQUIRE(ctree::item_data_mut(w, p).size() == size);
}

}  // namespace

TEST_CASE("write: an item near the maximum size in the middle of a full leaf (double split)") {
  MemWriter w(4096);
  auto root = new_tree(w);
  Model m;
  u32 max_item = leaf_data_size(4096) - static_cast<u32>(sizeof(Item));
  // Three items fill most of the leaf; the new one goes between the first two.
  insert(w, root, m, Key{10, 2, 0}, 1300, 1);
  insert(w, root, m, Key{30, 2, 0}, 1300, 2);
  insert(w, root, m, Key{40, 2, 0}, 1300, 3);
  insert(w, root, m, Key{20, 2, 0}, max_item - 10, 4);
  check_tree(w, root, m);
  // And at both ends of full leaves.
  insert(w, root, m, Key{5, 2, 0}, max_item, 5);
  insert(w, root, m, Key{50, 2, 0}, max_item, 6);
  check_tree(w, root, m);
}

TEST_CASE("write: growing an item whose leaf is full splits the leaf") {
  MemWriter w(4096);
  auto root = new_tree(w);
  Model m;
  u32 max_item = leaf_data_size(4096) - static_cast<u32>(sizeof(Item));
  for (u64 i = 0; i < 12; ++i) insert(w, root, m, Key{100 + i, 2, 0}, 300, static_cast<u8>(i));
  // First, middle and last item grow beyond the leaf's free space.
  resize(w, root, m, Key{105, 2, 0}, 1500);
  resize(w, root, m, Key{100, 2, 0}, 2000);
  resize(w, root, m, Key{111, 2, 0}, max_item);
  check_tree(w, root, m);
  resize(w, root, m, Key{106, 2, 0}, max_item);
  check_tree(w, root, m);
}

TEST_CASE("write: seeded random operations against a model, 4K and 16K nodes") {
  for (u32 ns : {4096u, 16384u}) {
    for (u64 seed : {1ULL, 2ULL, 3ULL}) {
      CAPTURE(ns);
      CAPTURE(seed);
      MemWriter w(ns);
      auto root = new_tree(w);
      Model m;
      Rng rng{seed};
      u32 max_item = leaf_data_size(ns) - static_cast<u32>(sizeof(Item));
      auto pick = [&]() {
        auto it = m.lower_bound(Key{rng.below(1 << 14), 0, 0});
        return it == m.end() ? m.begin() : it;
      };
      u8 max_height = 0;
      u8 height_after_peak = 0;
      for (int txn = 0; txn < 30; ++txn) {
        bool shrink = txn % 6 == 4;
        for (int op = 0; op < 1000; ++op) {
          u64 x = rng.below(100);
          if (m.empty() || (!shrink && x < 55) || (shrink && x < 10)) {
            Key k{rng.below(1 << 14), static_cast<u8>(rng.below(2) ? 2 : 9), rng.below(3)};
            if (m.count(k)) continue;
            u64 sx = rng.below(100);
            u32 size = static_cast<u32>(sx < 70 ? rng.below(301) : sx < 93 ? rng.below(1500) : max_item - rng.below(64));
            insert(w, root, m, k, size, static_cast<u8>(rng.next()));
          } else if (x < 75) {
            auto it = pick();
            int run = shrink ? static_cast<int>(rng.below(40)) + 1 : 1;
            Key k = it->first;
            for (int i = 0; i < run && !m.empty(); ++i) {
              ctree::Path p;
              auto f = ctree::search_slot_for_write(w, root, k, 0, p);
              REQUIRE(f);
              REQUIRE(*f);
              REQUIRE(ctree::delete_item(w, root, p));
              auto next = m.erase(m.find(k));
              if (next == m.end()) break;
              k = next->first;
            }
          } else {
            auto it = pick();
            u32 old = static_cast<u32>(it->second.size());
            u32 size = rng.below(2) ? static_cast<u32>(rng.below(old + 1))
                                    : static_cast<u32>(std::min<u64>(max_item, old + rng.below(rng.below(10) ? 300 : max_item)));
            resize(w, root, m, it->first, size);
          }
        }
        w.commit();
        check_tree(w, root, m);
        u8 height = static_cast<u8>(root.level + 1);
        if (height < max_height) height_after_peak = std::max(height_after_peak, static_cast<u8>(max_height - height));
        max_height = std::max(max_height, height);
      }
      MESSAGE("ns " << ns << " seed " << seed << ": max height " << int(max_height) << ", leaf pushes " << root.stats.pushes[0]
                    << " merges " << root.stats.merges[0] << ", level 1 pushes " << root.stats.pushes[1] << " merges "
                    << root.stats.merges[1] << " splits " << root.stats.splits[1] << ", root collapses " << root.stats.root_collapses);
      CHECK(root.stats.pushes[0] > 0);
      CHECK(root.stats.merges[0] > 0);
      CHECK(height_after_peak > 0);  // mass deletions lowered the tree
      if (ns == 4096) {
        CHECK(max_height >= 3);
        CHECK(root.stats.merges[1] > 0);
      }
    }
  }
}

// 4K leaves hold 3995 bytes: twelve 300-byte items (325 with the header)
// fill one to 95 bytes of free space.
TEST_CASE("push: an insertion into a full leaf moves items into the right sibling instead of splitting") {
  MemWriter w(4096);
  Model m;
  u64 a = make_leaf(w, m, items_of(100, 12, 300, 10)), b = make_leaf(w, m, items_of(1000, 2, 300));
  auto root = committed_root(w, make_node(w, 1, {a, b}), 1);
  u64 before = w.allocations;
  insert(w, root, m, Key{155, 2, 0}, 300, 7);  // in the middle of the full leaf
  auto levels = check_tree(w, root, m);
  CHECK(levels[0] == 2);  // no new leaf
  CHECK(root.stats.pushes[0] == 1);
  CHECK(root.stats.splits[0] == 0);
  CHECK(w.allocations - before == 3);  // root, leaf and sibling copied
}

TEST_CASE("push: an insertion into a full leaf moves items into the left sibling") {
  MemWriter w(4096);
  Model m;
  u64 a = make_leaf(w, m, items_of(10, 2, 300)), b = make_leaf(w, m, items_of(100, 12, 300, 10));
  auto root = committed_root(w, make_node(w, 1, {a, b}), 1);
  insert(w, root, m, Key{155, 2, 0}, 300, 7);
  auto levels = check_tree(w, root, m);
  CHECK(levels[0] == 2);
  CHECK(root.stats.pushes[0] == 1);
  CHECK(root.stats.splits[0] == 0);
}

TEST_CASE("push: an item past the last one of a full leaf goes into the right sibling, nothing moves") {
  MemWriter w(4096);
  Model m;
  u64 a = make_leaf(w, m, items_of(100, 12, 300)), b = make_leaf(w, m, items_of(1000, 2, 300));
  auto root = committed_root(w, make_node(w, 1, {a, b}), 1);
  insert(w, root, m, Key{500, 2, 0}, 300, 7);
  check_tree(w, root, m);
  CHECK(root.stats.pushes[0] == 1);
  CHECK(root.stats.splits[0] == 0);
  // The new item is the right leaf's first: the parent's key follows.
  auto top = *w.read_tree_block(root.bytenr, ctree::ParentCheck{});
  CHECK(top->view().node_key(1) == Key{500, 2, 0});
}

TEST_CASE("push: a full leaf whose siblings are full splits; growing an item pushes too") {
  MemWriter w(4096);
  Model m;
  u64 a = make_leaf(w, m, items_of(10, 12, 300)), b = make_leaf(w, m, items_of(100, 12, 300)), c = make_leaf(w, m, items_of(1000, 12, 300));
  auto root = committed_root(w, make_node(w, 1, {a, b, c}), 1);
  insert(w, root, m, Key{105, 2, 1}, 300, 7);
  auto levels = check_tree(w, root, m);
  CHECK(root.stats.splits[0] == 1);
  CHECK(levels[0] == 4);
  // Now the leaf after the split has room next door: growing an item of the
  // full last leaf pushes into its left sibling.
  ctree::WriteStats st = root.stats;
  resize(w, root, m, Key{1005, 2, 0}, 700);
  check_tree(w, root, m);
  CHECK(root.stats.pushes[0] == st.pushes[0] + 1);
  CHECK(root.stats.splits[0] == st.splits[0]);
}

TEST_CASE("merge: a deletion leaving a leaf under a third full empties it into its siblings") {
  MemWriter w(4096);
  Model m;
  // 1331 bytes is a third: four 300-byte items (1300) are under it.
  u64 a = make_leaf(w, m, items_of(10, 6, 300)), b = make_leaf(w, m, items_of(100, 4, 300)), c = make_leaf(w, m, items_of(1000, 6, 300));
  auto root = committed_root(w, make_node(w, 1, {a, b, c}), 1);
  erase(w, root, m, Key{101, 2, 0});
  auto levels = check_tree(w, root, m);
  CHECK(levels[0] == 2);
  CHECK(root.stats.merges[0] == 1);
}

TEST_CASE("merge: a sparse leaf between full ones stays; one that only partly fits leftwards is pushed") {
  MemWriter w(4096);
  Model m;
  u64 a = make_leaf(w, m, items_of(10, 12, 300)), b = make_leaf(w, m, items_of(100, 4, 300)), c = make_leaf(w, m, items_of(1000, 12, 300));
  auto root = committed_root(w, make_node(w, 1, {a, b, c}), 1);
  erase(w, root, m, Key{101, 2, 0});
  auto levels = check_tree(w, root, m);
  CHECK(levels[0] == 3);
  CHECK(root.stats.merges[0] == 0);
  CHECK(root.stats.pushes[0] == 0);
  // Left sibling with room for one item only, right one full: one moves.
  MemWriter w2(4096);
  Model m2;
  a = make_leaf(w2, m2, items_of(10, 11, 300));
  b = make_leaf(w2, m2, items_of(100, 4, 300));
  c = make_leaf(w2, m2, items_of(1000, 12, 300));
  auto root2 = committed_root(w2, make_node(w2, 1, {a, b, c}), 1);
  erase(w2, root2, m2, Key{103, 2, 0});
  levels = check_tree(w2, root2, m2);
  CHECK(levels[0] == 3);
  CHECK(root2.stats.pushes[0] == 1);
}

TEST_CASE("merge: a root left with one child is replaced by it") {
  MemWriter w(4096);
  Model m;
  u64 a = make_leaf(w, m, items_of(10, 12, 300)), b = make_leaf(w, m, items_of(100, 2, 300));
  auto root = committed_root(w, make_node(w, 1, {a, b}), 1);
  erase(w, root, m, Key{100, 2, 0});
  erase(w, root, m, Key{101, 2, 0});
  check_tree(w, root, m);
  CHECK(root.level == 0);
  CHECK(root.stats.root_collapses == 1);
}

// Leaves of two 1400-byte items and a 10-byte one: 2875 bytes, well over a
// third, so deleting the small item never merges leaves.
std::vector<u64> node_leaves(MemWriter& w, Model& m, u64 first, u32 n) {
  std::vector<u64> v;
  for (u32 i = 0; i < n; ++i) v.push_back(make_leaf(w, m, {{first + 10 * i, 1400}, {first + 10 * i + 1, 1400}, {first + 10 * i + 2, 10}}));
  return v;
}

TEST_CASE("merge: a node at a quarter of its pointers takes its sibling's, the emptied sibling goes, the root collapses") {
  MemWriter w(4096);  // 121 pointers a node: a quarter is 30
  Model m;
  u64 n1 = make_node(w, 1, node_leaves(w, m, 1000, 20)), n2 = make_node(w, 1, node_leaves(w, m, 5000, 25));
  auto root = committed_root(w, make_node(w, 2, {n1, n2}), 2);
  erase(w, root, m, Key{1002, 2, 0});
  auto levels = check_tree(w, root, m);
  CHECK(root.stats.merges[1] == 1);
  CHECK(root.stats.root_collapses == 1);
  CHECK(root.level == 1);
  CHECK(levels[1] == 1);
  CHECK(levels[0] == 45);
}

TEST_CASE("merge: a node at a quarter balances with a full sibling without emptying it") {
  MemWriter w(4096);
  Model m;
  u64 n1 = make_node(w, 1, node_leaves(w, m, 1000, 100)), n2 = make_node(w, 1, node_leaves(w, m, 5000, 10)),
      n3 = make_node(w, 1, node_leaves(w, m, 9000, 100));
  auto root = committed_root(w, make_node(w, 2, {n1, n2, n3}), 2);
  erase(w, root, m, Key{5002, 2, 0});
  auto levels = check_tree(w, root, m);
  CHECK(levels[1] <= 3);
  CHECK(root.stats.merges[1] + root.stats.pushes[1] == 1);
  CHECK(root.level == 2);
}

TEST_CASE("push: a node at the split threshold moves pointers into its sibling instead of splitting") {
  MemWriter w(4096);  // a node splits at 120 pointers
  Model m;
  u64 n1 = make_node(w, 1, node_leaves(w, m, 10000, 120)), n2 = make_node(w, 1, node_leaves(w, m, 50000, 40));
  auto root = committed_root(w, make_node(w, 2, {n1, n2}), 2);
  insert(w, root, m, Key{10003, 2, 0}, 10, 9);
  auto levels = check_tree(w, root, m);
  CHECK(root.stats.pushes[1] == 1);
  CHECK(root.stats.splits[1] == 0);
  CHECK(levels[1] == 2);
  CHECK(root.level == 2);
  // Both nodes end at most three quarters full (node_fill_limit).
  auto top = *w.read_tree_block(root.bytenr, ctree::ParentCheck{});
  for (u32 i = 0; i < 2; ++i) CHECK((*w.read_tree_block(top->view().blockptr(i), ctree::ParentCheck{}))->view().nritems() <= 120 - 30);
}

TEST_CASE("push: a node at the threshold whose sibling is too full splits") {
  MemWriter w(4096);
  Model m;
  u64 n1 = make_node(w, 1, node_leaves(w, m, 10000, 120)), n2 = make_node(w, 1, node_leaves(w, m, 50000, 80));
  auto root = committed_root(w, make_node(w, 2, {n1, n2}), 2);
  insert(w, root, m, Key{10003, 2, 0}, 10, 9);
  auto levels = check_tree(w, root, m);
  CHECK(root.stats.pushes[1] == 0);
  CHECK(root.stats.splits[1] == 1);
  CHECK(levels[1] == 3);
}

TEST_CASE("plan: the replay counts exactly what the real run allocates, and stops at its limit") {
  for (u32 ns : {4096u, 16384u}) {
    CAPTURE(ns);
    MemWriter w(ns);
    auto root = new_tree(w);
    w.commit();  // a block the transaction already copied would be counted again by the replay
    Model m;
    Rng rng{ns};
    u32 max_item = leaf_data_size(ns) - static_cast<u32>(sizeof(Item));
    for (int txn = 0; txn < 12; ++txn) {
      // A plan against the model, then the replay, then the real run.
      std::vector<ctree::PlannedChange> plan;
      std::map<Key, u32> sim;
      for (auto& [k, v] : m) sim[k] = static_cast<u32>(v.size());
      bool shrink = txn % 4 == 3;
      for (int op = 0; op < 300; ++op) {
        u64 x = rng.below(100);
        if (sim.empty() || (!shrink && x < 55) || (shrink && x < 10)) {
          Key k{rng.below(1 << 14), 2, rng.below(3)};
          if (sim.count(k)) continue;
          u32 size = static_cast<u32>(rng.below(10) ? rng.below(400) : max_item - rng.below(64));
          sim[k] = size;
          plan.push_back({ctree::PlannedChange::Kind::insert, k, size});
        } else {
          auto it = sim.lower_bound(Key{rng.below(1 << 14), 0, 0});
          if (it == sim.end()) it = sim.begin();
          if (x < 80) {
            plan.push_back({ctree::PlannedChange::Kind::erase, it->first, 0});
            sim.erase(it);
          } else if (x < 90) {
            u32 size = static_cast<u32>(std::min<u64>(max_item, it->second + rng.below(600)));
            it->second = size;
            plan.push_back({ctree::PlannedChange::Kind::resize, it->first, size});
          } else {
            plan.push_back({ctree::PlannedChange::Kind::update, it->first, 0});
          }
        }
      }
      auto counted = ctree::count_planned_blocks(w, 200, root.ref(), w.transid(), plan, 1 << 20);
      REQUIRE_MESSAGE(counted, (counted ? std::string() : counted.error().message));
      CHECK_FALSE(counted->capped);
      // A limit below the count stops the replay.
      if (counted->blocks > 2) {
        auto capped = ctree::count_planned_blocks(w, 200, root.ref(), w.transid(), plan, 2);
        REQUIRE_MESSAGE(capped, (capped ? std::string() : capped.error().message));
        CHECK(capped->capped);
        CHECK(capped->blocks == 2);
      }
      u64 before = w.allocations;
      ctree::WriteStats st_before = root.stats;
      for (auto& c : plan) {
        switch (c.kind) {
          case ctree::PlannedChange::Kind::insert:
            insert(w, root, m, c.key, c.size, 3);
            break;
          case ctree::PlannedChange::Kind::erase:
            erase(w, root, m, c.key);
            break;
          case ctree::PlannedChange::Kind::resize:
            resize(w, root, m, c.key, c.size);
            break;
          case ctree::PlannedChange::Kind::update: {
            ctree::Path p;
            REQUIRE(ctree::search_slot_for_write(w, root, c.key, 0, p));
            break;
          }
        }
      }
      CHECK(w.allocations - before == counted->blocks);
      CHECK(root.stats.pushes[0] - st_before.pushes[0] == counted->stats.pushes[0]);
      CHECK(root.stats.merges[0] - st_before.merges[0] == counted->stats.merges[0]);
      CHECK(root.stats.splits[0] - st_before.splits[0] == counted->stats.splits[0]);
      CHECK(root.level == counted->level);
      w.commit();
      check_tree(w, root, m);
    }
  }
}

TEST_CASE("plan: a change that does not apply is an error; a tree that does not exist starts as one leaf") {
  MemWriter w(4096);
  auto root = new_tree(w);
  Model m;
  insert(w, root, m, Key{5, 2, 0}, 10, 1);
  w.commit();
  std::vector<ctree::PlannedChange> bad{{ctree::PlannedChange::Kind::erase, Key{6, 2, 0}, 0}};
  auto r = ctree::count_planned_blocks(w, 200, root.ref(), w.transid(), bad, 100);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::invalid_argument);
  std::vector<ctree::PlannedChange> dup{{ctree::PlannedChange::Kind::insert, Key{5, 2, 0}, 1}};
  CHECK_FALSE(ctree::count_planned_blocks(w, 200, root.ref(), w.transid(), dup, 100));
  std::vector<ctree::PlannedChange> one{{ctree::PlannedChange::Kind::insert, Key{1, 2, 0}, 1}};
  auto fresh = ctree::count_planned_blocks(w, 201, std::nullopt, w.transid(), one, 100);
  REQUIRE(fresh);
  CHECK(fresh->blocks == 1);
}
