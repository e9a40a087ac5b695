// SPDX-License-Identifier: GPL-2.0-only
// B-tree write side (lib/ctree/write.cpp) over an in-memory TreeWriter:
// splits of leaves (including the double split an item near the maximum size
// needs in the middle of a full leaf), growing an item whose leaf is full,
// emptied leaves, and a seeded random run against a std::map model with a
// full structural walk after every "commit" (the hermetic twin of
// tests/tools/tree_torture.cpp, which runs on real images).
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <set>

#include "lib/ctree/tree_checker.h"
#include "lib/ctree/write.h"

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
};

void walk(MemWriter& w, u64 bytenr, const ctree::ParentCheck& c, bool is_root, Walk& out) {
  auto r = w.read_tree_block(bytenr, c);
  REQUIRE_MESSAGE(r, (r ? std::string() : r.error().message));
  auto b = *r;
  NodeView v = b->view();
  out.blocks++;
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

void check_tree(MemWriter& w, const ctree::WriteRoot& root, const Model& m) {
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
}

struct Rng {
  u64 s;
  u64 next() {
    u64 z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  u64 below(u64 n) { return n ? next() % n : 0; }
};

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
      for (int txn = 0; txn < 30; ++txn) {
        bool shrink = txn % 6 == 4;
        for (int op = 0; op < 400; ++op) {
          u64 x = rng.below(100);
          if (m.empty() || (!shrink && x < 50) || (shrink && x < 10)) {
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
        max_height = std::max<u8>(max_height, static_cast<u8>(root.level + 1));
      }
      if (ns == 4096) CHECK(max_height >= 3);
    }
  }
}
