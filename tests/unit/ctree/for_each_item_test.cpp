// SPDX-License-Identifier: GPL-2.0-only
// for_each_item (lib/ctree/search.h) reads the leaves of a range ahead in
// batches: a scan over many leaves makes few single-block reads, visits
// every item of the range in key order, and reads nothing past the range.
#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "lib/ctree/search.h"
#include "tests/unit/ctree/mem_trees.h"

using namespace fsctl;

namespace {

/// A BlockSource over MemTrees that counts single-block reads of blocks not
/// read ahead before (what would be a synchronous device read each).
class CountingSource final : public ctree::BlockSource {
 public:
  explicit CountingSource(test::MemTrees& t) : t_(t) {}
  Result<cache::TreeBlockRef> read_tree_block(u64 bytenr, const ctree::ParentCheck& check) override {
    if (!ahead_.count(bytenr)) ++single_misses;
    return t_.read_tree_block(bytenr, check);
  }
  Status read_tree_blocks(std::vector<ctree::BlockRequest> reqs, const std::function<Status(const cache::TreeBlockRef&)>& visit,
                          bool keep_in_cache) override {
    ++batches;
    for (auto& r : reqs) {
      if (keep_in_cache) ahead_.insert(r.bytenr);
      batched.insert(r.bytenr);
    }
    return t_.read_tree_blocks(std::move(reqs), visit, keep_in_cache);
  }
  u32 nodesize() const override { return t_.nodesize(); }

  u64 single_misses = 0, batches = 0;
  std::set<u64> batched;

 private:
  test::MemTrees& t_;
  std::set<u64> ahead_;
};

}  // namespace

TEST_CASE("for_each_item reads a range's leaves ahead in batches and visits every item in order") {
  test::MemTrees trees;
  ctree::WriteRoot root = trees.new_tree(5);
  std::vector<u8> data(200, 0x5a);
  const u64 N = 3000;  // about 17 items of 200 bytes per 4K leaf: ~180 leaves, two levels of nodes
  for (u64 i = 0; i < N; ++i) REQUIRE(ctree::insert_item(trees, root, format::Key{i, format::KeyType::INODE_ITEM, 0}, data));
  REQUIRE(root.level >= 1);

  CountingSource src(trees);
  std::vector<u64> seen;
  auto visit = [&](const format::NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
    seen.push_back(leaf.item_key(slot).objectid);
    return ctree::Visit::next;
  };
  REQUIRE(ctree::for_each_item(src, root.ref(), ctree::KeyRange{}, visit));
  REQUIRE(seen.size() == N);
  for (u64 i = 0; i < N; ++i) CHECK(seen[i] == i);
  // Without read-ahead every one of ~180 leaves is a single read; with it,
  // about one per FOR_EACH_READ_AHEAD leaves and per parent node, plus the path.
  CHECK(src.single_misses < 20);

  SUBCASE("a range in the middle reads no leaf past its end") {
    CountingSource part(trees);
    seen.clear();
    REQUIRE(ctree::for_each_item(part, root.ref(), ctree::KeyRange{{1000, format::KeyType::INODE_ITEM, 0}, {1100, format::KeyType::INODE_ITEM, 0}}, visit));
    REQUIRE(seen.size() == 101);
    CHECK(seen.front() == 1000);
    CHECK(seen.back() == 1100);
    // Every leaf read ahead starts at or before the range's end.
    for (u64 b : part.batched) {
      auto blk = trees.read_tree_block(b, {});
      REQUIRE(blk);
      if ((*blk)->view().level() == 0) CHECK((*blk)->view().item_key(0).objectid <= 1100);
    }
  }
}
