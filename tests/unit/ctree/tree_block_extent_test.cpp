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

using namespace fsctl;
using namespace fsctl::format;

namespace {

// Blocks in memory, one transaction, nothing freed for good.
class MemTrees final : public ctree::TreeWriter {
 public:
  u64 transid() const override { return 10; }
  u32 nodesize() const override { return 4096; }
  Result<std::shared_ptr<cache::TreeBlock>> alloc_tree_block(u64 owner, u8 level) override {
    auto b = std::make_shared<cache::TreeBlock>();
    b->bytenr = next_ += 4096;
    b->data.assign(4096, 0);
    b->dirty = true;
    TreeBlockHeader h;
    h.bytenr = b->bytenr;
    h.generation = transid();
    h.owner = owner;
    h.level = level;
    store_header(b->data, h);
    blocks_[b->bytenr] = b;
    return b;
  }
  Status free_tree_block(u64, u64, u8) override { return {}; }
  std::shared_ptr<cache::TreeBlock> dirty_block(u64 bytenr) override {
    auto it = blocks_.find(bytenr);
    return it == blocks_.end() ? nullptr : it->second;
  }
  Result<cache::TreeBlockRef> read_tree_block(u64 bytenr, const ctree::ParentCheck& check) override {
    auto it = blocks_.find(bytenr);
    if (it == blocks_.end()) return make_error(Errc::not_found, "no block " + std::to_string(bytenr));
    FSCTL_TRY(ctree::check_node_layout(it->second->data, 4096));
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
  ctree::WriteRoot new_tree(u64 id) {
    auto leaf = alloc_tree_block(id, 0);
    REQUIRE(leaf);
    return ctree::WriteRoot{id, (*leaf)->bytenr, 0, transid()};
  }

 private:
  u64 next_ = 1 << 20;
  std::map<u64, std::shared_ptr<cache::TreeBlock>> blocks_;
};

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
