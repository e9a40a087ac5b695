// SPDX-License-Identifier: GPL-2.0-only
// The one rule for which tree holds a BLOCK_GROUP_ITEM
// (lib/ctree/block_group_lookup.h), over trees built in memory: the block
// group tree when it exists, the extent tree when there is none or the item
// is not in it, both during a conversion (an item in both is corrupt), and a
// short item is corruption naming the key and tree.
#include <doctest/doctest.h>

#include <map>

#include "lib/ctree/block_group_lookup.h"
#include "lib/ctree/tree_checker.h"
#include "lib/ctree/write.h"
#include "lib/format/items.h"
#include "lib/format/tree_header.h"
#include "tests/unit/ctree/mem_trees.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {

using fsctl::test::MemTrees;

void put(MemTrees& w, ctree::WriteRoot& root, u64 start, u64 length, u64 used) {
  REQUIRE(ctree::insert_item(w, root, Key{start, KeyType::BLOCK_GROUP_ITEM, length},
                             encode_block_group_item({used, FIRST_CHUNK_TREE_OBJECTID, BLOCK_GROUP_METADATA})));
}

}  // namespace

TEST_CASE("find_block_group_item: which tree, for every conversion state") {
  MemTrees w;
  ctree::WriteRoot ext = w.new_tree(EXTENT_TREE_OBJECTID);
  ctree::WriteRoot bgt = w.new_tree(BLOCK_GROUP_TREE_OBJECTID);
  put(w, ext, 1 * MiB, MiB, 100);   // only in the extent tree
  put(w, bgt, 2 * MiB, MiB, 200);   // only in the block group tree
  put(w, ext, 3 * MiB, MiB, 301);   // in both
  put(w, bgt, 3 * MiB, MiB, 302);

  ctree::BlockGroupTrees extent_only{std::nullopt, ext.ref(), false};
  ctree::BlockGroupTrees with_bgt{bgt.ref(), ext.ref(), false};
  ctree::BlockGroupTrees converting{bgt.ref(), ext.ref(), true};

  auto find = [&](const ctree::BlockGroupTrees& t, u64 start) { return ctree::find_block_group_item(w, t, start, MiB); };

  // No block group tree: the extent tree.
  auto a = find(extent_only, 1 * MiB);
  REQUIRE(a);
  REQUIRE(*a);
  CHECK((*a)->tree == EXTENT_TREE_OBJECTID);
  CHECK((*a)->item.used == 100);
  CHECK(find(extent_only, 2 * MiB).value() == std::nullopt);

  // A block group tree: it first; the extent tree for what it lacks.
  auto b = find(with_bgt, 2 * MiB);
  REQUIRE(b);
  CHECK((*b)->tree == BLOCK_GROUP_TREE_OBJECTID);
  CHECK((*b)->item.used == 200);
  auto c = find(with_bgt, 1 * MiB);
  REQUIRE(c);
  CHECK((*c)->tree == EXTENT_TREE_OBJECTID);
  auto d = find(with_bgt, 3 * MiB);  // not converting: the block group tree's item wins, the other is not looked at
  REQUIRE(d);
  CHECK((*d)->item.used == 302);
  CHECK(find(with_bgt, 9 * MiB).value() == std::nullopt);

  // During a conversion both trees are searched; an item in both is corrupt.
  auto e = find(converting, 3 * MiB);
  REQUIRE(!e);
  CHECK(e.error().code == Errc::corrupt);
  CHECK(e.error().message == "block group 3145728 has an item in both the extent tree and the block group tree");
  CHECK(find(converting, 1 * MiB).value()->tree == EXTENT_TREE_OBJECTID);
  CHECK(find(converting, 2 * MiB).value()->tree == BLOCK_GROUP_TREE_OBJECTID);

  // The trees to read ahead follow the same rule.
  CHECK(ctree::block_group_item_trees(extent_only).size() == 1);
  CHECK(ctree::block_group_item_trees(with_bgt).size() == 1);
  CHECK(ctree::block_group_item_trees(with_bgt)[0].root_id == BLOCK_GROUP_TREE_OBJECTID);
  CHECK(ctree::block_group_item_trees(converting).size() == 2);
}

TEST_CASE("find_block_group_item: a short item is corrupt, naming key and tree") {
  MemTrees w;
  ctree::WriteRoot ext = w.new_tree(EXTENT_TREE_OBJECTID);
  REQUIRE(ctree::insert_item(w, ext, Key{1 << 20, KeyType::BLOCK_GROUP_ITEM, 1 << 20}, std::vector<u8>(16, 0)));
  auto r = ctree::find_block_group_item(w, {std::nullopt, ext.ref(), false}, 1 << 20, 1 << 20);
  REQUIRE(!r);
  CHECK(r.error().code == Errc::corrupt);
  CHECK(r.error().message ==
        "(1048576 192 1048576) in the EXTENT_TREE: block group item of 16 bytes, expect at least 24");
}
