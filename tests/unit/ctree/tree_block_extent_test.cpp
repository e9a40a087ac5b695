// SPDX-License-Identifier: GPL-2.0-only
// The one rule for a tree block's extent item (lib/ctree/tree_block_extent.h),
// over an extent tree built in memory: the skinny METADATA_ITEM and the old
// EXTENT_ITEM with btrfs_tree_block_info are both found (a filesystem after
// btrfstune -x holds both), found for write and edited or deleted in place,
// and a data extent's EXTENT_ITEM is never taken for a tree block's.
#include <doctest/doctest.h>

#include <map>

#include "lib/ctree/search.h"
#include "lib/ctree/tree_block_extent.h"
#include "lib/ctree/tree_checker.h"
#include "lib/ctree/write.h"
#include "lib/format/items.h"
#include "lib/format/tree_header.h"
#include "tests/unit/ctree/mem_trees.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {

using fsctl::test::MemTrees;

constexpr u32 NS = 4096;  // MemTrees' nodesize

// Extent tree: block 1 MiB skinny at level 0, block 2 MiB old form at level 1
// (first key (256 INODE_ITEM 0)), and a 2 MiB + 4K data extent of nodesize
// bytes (an EXTENT_ITEM of the same shape without TREE_BLOCK).
ctree::WriteRoot extent_tree(MemTrees& w) {
  ctree::WriteRoot ext = w.new_tree(EXTENT_TREE_OBJECTID);
  REQUIRE(ctree::insert_item(w, ext, tree_block_extent_key(1 << 20, 0, NS, true),
                             encode_extent_item(new_tree_block_extent(7, 0, 5, true))));
  REQUIRE(ctree::insert_item(w, ext, tree_block_extent_key(2 << 20, 1, NS, false),
                             encode_extent_item(new_tree_block_extent(7, 1, 256, false, Key{256, KeyType::INODE_ITEM, 0}))));
  ExtentRecord data;
  data.refs = 1;
  data.generation = 7;
  data.flags = EXTENT_FLAG_DATA;
  ExtentRef dref;
  dref.type = KeyType::EXTENT_DATA_REF;
  dref.root = 5;
  dref.objectid = 257;
  data.inline_refs.push_back(dref);
  REQUIRE(ctree::insert_item(w, ext, Key{(2 << 20) + NS, KeyType::EXTENT_ITEM, NS}, encode_extent_item(data)));
  return ext;
}

}  // namespace

TEST_CASE("find_tree_block_extent: the skinny and the old form, and neither") {
  MemTrees w;
  ctree::WriteRoot ext = extent_tree(w);
  ctree::Path p;
  auto k = ctree::find_tree_block_extent(w, ext.ref(), 1 << 20, 0, NS, p);
  REQUIRE(k);
  REQUIRE(*k);
  CHECK(**k == Key{1 << 20, KeyType::METADATA_ITEM, 0});
  CHECK(p.key() == **k);
  k = ctree::find_tree_block_extent(w, ext.ref(), 2 << 20, 1, NS, p);
  REQUIRE(k);
  REQUIRE(*k);
  CHECK(**k == Key{2 << 20, KeyType::EXTENT_ITEM, NS});
  auto old = ctree::read_tree_block_extent(w, ext.ref(), 2 << 20, 1, NS);
  REQUIRE(old);
  REQUIRE(*old);
  CHECK((*old)->rec.has_tree_block_info);
  CHECK((*old)->rec.level == 1);
  CHECK((*old)->rec.tree_block_key == Key{256, KeyType::INODE_ITEM, 0});
  CHECK((*old)->rec.inline_refs.at(0).root == 256);
  // A skinny level that is not there, and a block without any item.
  k = ctree::find_tree_block_extent(w, ext.ref(), 1 << 20, 1, NS, p);
  REQUIRE(k);
  CHECK(!*k);
  k = ctree::find_tree_block_extent(w, ext.ref(), 3 << 20, 0, NS, p);
  REQUIRE(k);
  CHECK(!*k);
}

TEST_CASE("a data extent's EXTENT_ITEM of nodesize bytes is not a tree block's") {
  MemTrees w;
  ctree::WriteRoot ext = extent_tree(w);
  auto r = ctree::read_tree_block_extent(w, ext.ref(), (2 << 20) + NS, 0, NS);
  REQUIRE(!r);
  CHECK(r.error().code == Errc::corrupt);
  CHECK(r.error().message.find("TREE_BLOCK") != std::string::npos);
  ExtentRecord tb = new_tree_block_extent(7, 0, 5, false);
  CHECK(ctree::is_tree_block_extent(Key{1, KeyType::EXTENT_ITEM, NS}, tb, NS));
  CHECK(!ctree::is_tree_block_extent(Key{1, KeyType::EXTENT_ITEM, 2 * NS}, tb, NS));
  CHECK(ctree::is_tree_block_extent(Key{1, KeyType::METADATA_ITEM, 0}, new_tree_block_extent(7, 0, 5, true), NS));
}

TEST_CASE("for write: an old-form item is edited in place and deleted, keeping its form") {
  MemTrees w;
  ctree::WriteRoot ext = extent_tree(w);
  ctree::Path p;
  auto k = ctree::find_tree_block_extent_for_write(w, ext, 2 << 20, 1, p);
  REQUIRE(k);
  REQUIRE(*k);
  REQUIRE(**k == Key{2 << 20, KeyType::EXTENT_ITEM, NS});
  auto rec = decode_extent_item(**k, p.item_data());
  REQUIRE(rec);
  rec->generation = 9;
  rec->inline_refs.at(0).root = 257;
  REQUIRE(store_extent_item(ctree::item_data_mut(w, p), *rec));
  p.release();
  auto again = ctree::read_tree_block_extent(w, ext.ref(), 2 << 20, 1, NS);
  REQUIRE(again);
  REQUIRE(*again);
  CHECK((*again)->rec.generation == 9);
  CHECK((*again)->rec.inline_refs.at(0).root == 257);
  CHECK((*again)->rec.has_tree_block_info);
  CHECK((*again)->key.type == KeyType::EXTENT_ITEM);
  // The item's size is the old form's: 24 + 18 + 9.
  ctree::Path q;
  REQUIRE(ctree::find_tree_block_extent(w, ext.ref(), 2 << 20, 1, NS, q));
  CHECK(q.item_data().size() == tree_block_extent_item_size(false));
  q.release();
  k = ctree::find_tree_block_extent_for_write(w, ext, 2 << 20, 1, p);
  REQUIRE(k);
  REQUIRE(*k);
  REQUIRE(ctree::delete_item(w, ext, p));
  auto gone = ctree::find_tree_block_extent(w, ext.ref(), 2 << 20, 1, NS, q);
  REQUIRE(gone);
  CHECK(!*gone);
  // The skinny one is still there, 33 bytes.
  auto sk = ctree::find_tree_block_extent(w, ext.ref(), 1 << 20, 0, NS, q);
  REQUIRE(sk);
  REQUIRE(*sk);
  CHECK(q.item_data().size() == tree_block_extent_item_size(true));
}
