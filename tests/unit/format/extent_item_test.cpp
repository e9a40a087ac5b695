// SPDX-License-Identifier: GPL-2.0-only
// EXTENT_ITEM / METADATA_ITEM codec (lib/format/extent_item.h): round trips
// of every inline ref type, both forms of a tree block's item, and byte
// equality with items real writers made. The non-skinny bytes below were
// read from an image made by `mkfs.btrfs -O ^skinny-metadata -n 16384` on a
// 256M file (btrfs-progs 6.2), then mounted by kernel 6.18 which created
// 1500 files and a snapshot; dump-tree -t extent printed them as
//   item 3 key (30408704 EXTENT_ITEM 16384) itemsize 51 (written by mkfs)
//     refs 1 gen 6 flags TREE_BLOCK
//     tree block key (1048576 BLOCK_GROUP_ITEM 4194304) level 0
//     tree block backref root EXTENT_TREE
//   item 58 key (31817728 EXTENT_ITEM 16384) itemsize 51 (written by the kernel)
//     refs 1 gen 9 flags TREE_BLOCK
//     tree block key (256 INODE_ITEM 0) level 1
//     tree block backref root 256
//   item 29 key (30982144 EXTENT_ITEM 16384) itemsize 60 (written by the kernel)
//     refs 2 gen 7 flags TREE_BLOCK
//     tree block key (256 DIR_INDEX 717) level 0
//     tree block backref root 256
//     tree block backref root FS_TREE
// (raw bytes: btrfs-map-logical for the leaf, then the item at 101 + itemoff).
#include <doctest/doctest.h>

#include <vector>

#include "lib/format/extent_item.h"
#include "lib/format/items.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {

const std::vector<u8> MKFS_EXTENT_TREE_LEAF = {
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, 0x00,
    0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb0, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
const std::vector<u8> KERNEL_NODE = {
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xb0, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
const std::vector<u8> KERNEL_SHARED_LEAF = {
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x60, 0xcd, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb0, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0xb0, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

ExtentRef ref_of(u8 type, u64 root, u64 parent = 0, u64 objectid = 0, u64 offset = 0, u32 count = 1) {
  ExtentRef r;
  r.type = type;
  r.root = root;
  r.parent = parent;
  r.objectid = objectid;
  r.offset = offset;
  r.count = count;
  return r;
}

}  // namespace

TEST_CASE("non-skinny tree block items: decode, and encode gives the writers' bytes") {
  // mkfs's item for an extent tree leaf.
  auto mk = decode_extent_item(Key{30408704, KeyType::EXTENT_ITEM, 16384}, MKFS_EXTENT_TREE_LEAF);
  REQUIRE(mk);
  CHECK(mk->refs == 1);
  CHECK(mk->generation == 6);
  CHECK(mk->flags == EXTENT_FLAG_TREE_BLOCK);
  CHECK(mk->has_tree_block_info);
  CHECK(mk->tree_block_key == Key{1048576, KeyType::BLOCK_GROUP_ITEM, 4194304});
  CHECK(mk->level == 0);
  REQUIRE(mk->inline_refs.size() == 1);
  CHECK(mk->inline_refs[0] == ref_of(KeyType::TREE_BLOCK_REF, EXTENT_TREE_OBJECTID));
  CHECK(encode_extent_item(*mk) == MKFS_EXTENT_TREE_LEAF);

  // The kernel's item for a new level-1 node: what new_tree_block_extent builds.
  ExtentRecord fresh = new_tree_block_extent(9, 1, 256, false, Key{256, KeyType::INODE_ITEM, 0});
  CHECK(encode_extent_item(fresh) == KERNEL_NODE);
  auto node = decode_extent_item(Key{31817728, KeyType::EXTENT_ITEM, 16384}, KERNEL_NODE);
  REQUIRE(node);
  CHECK(*node == fresh);
  CHECK(tree_block_extent_key(31817728, 1, 16384, false) == Key{31817728, KeyType::EXTENT_ITEM, 16384});

  // A leaf shared by a snapshot: two TREE_BLOCK_REFs, roots descending.
  auto shared = decode_extent_item(Key{30982144, KeyType::EXTENT_ITEM, 16384}, KERNEL_SHARED_LEAF);
  REQUIRE(shared);
  CHECK(shared->refs == 2);
  CHECK(shared->tree_block_key == Key{256, KeyType::DIR_INDEX, 717});
  REQUIRE(shared->inline_refs.size() == 2);
  CHECK(shared->inline_refs[0].root == 256);
  CHECK(shared->inline_refs[1].root == FS_TREE_OBJECTID);
  auto resorted = shared->inline_refs;
  sort_inline_refs(resorted);
  CHECK(resorted == shared->inline_refs);
  CHECK(encode_extent_item(*shared) == KERNEL_SHARED_LEAF);
}

TEST_CASE("skinny METADATA_ITEM of a new tree block: the 33 bytes the transaction inserts") {
  ExtentRecord rec = new_tree_block_extent(42, 2, 5, true);
  std::vector<u8> bytes = encode_extent_item(rec);
  // btrfs_extent_item {refs 1, generation 42, flags TREE_BLOCK} + TREE_BLOCK_REF root 5.
  std::vector<u8> want(33, 0);
  want[0] = 1;
  want[8] = 42;
  want[16] = 2;
  want[24] = KeyType::TREE_BLOCK_REF;
  want[25] = 5;
  CHECK(bytes == want);
  CHECK(tree_block_extent_key(4096, 2, 16384, true) == Key{4096, KeyType::METADATA_ITEM, 2});
  auto back = decode_extent_item(Key{4096, KeyType::METADATA_ITEM, 2}, bytes);
  REQUIRE(back);
  CHECK(back->level == 2);
  CHECK(!back->has_tree_block_info);
  CHECK(back->inline_refs == rec.inline_refs);

  // With a parent: FULL_BACKREF and a SHARED_BLOCK_REF (kernel alloc_reserved_tree_block).
  ExtentRecord shared = new_tree_block_extent(42, 0, 5, true, {}, 1 << 20);
  CHECK(shared.flags == (EXTENT_FLAG_TREE_BLOCK | BLOCK_FLAG_FULL_BACKREF));
  REQUIRE(shared.inline_refs.size() == 1);
  CHECK(shared.inline_refs[0] == ref_of(KeyType::SHARED_BLOCK_REF, 0, 1 << 20));
}

TEST_CASE("every inline ref type round-trips, EXTENT_OWNER_REF (simple quotas) first") {
  ExtentRecord rec;
  rec.refs = 6;
  rec.generation = 77;
  rec.flags = EXTENT_FLAG_DATA;
  rec.inline_refs = {ref_of(KeyType::EXTENT_OWNER_REF, 257),
                     ref_of(KeyType::EXTENT_DATA_REF, 5, 0, 300, 4096, 2),
                     ref_of(KeyType::SHARED_DATA_REF, 0, 1 << 22, 0, 0, 3),
                     ref_of(KeyType::TREE_BLOCK_REF, 256),
                     ref_of(KeyType::SHARED_BLOCK_REF, 0, 1 << 23)};
  sort_inline_refs(rec.inline_refs);
  CHECK(rec.inline_refs[0].type == KeyType::EXTENT_OWNER_REF);  // 172, the lowest type
  auto bytes = encode_extent_item(rec);
  CHECK(bytes.size() == 24 + 9 + 9 + 29 + 9 + 13);
  auto back = decode_extent_item(Key{1 << 24, KeyType::EXTENT_ITEM, 8192}, bytes);
  REQUIRE(back);
  CHECK(*back == rec);

  // An owner ref alone, as the kernel writes a squota data extent: type 172, root.
  ExtentRecord owned;
  owned.refs = 1;
  owned.generation = 9;
  owned.flags = EXTENT_FLAG_DATA;
  owned.inline_refs = {ref_of(KeyType::EXTENT_OWNER_REF, 258), ref_of(KeyType::EXTENT_DATA_REF, 258, 0, 257, 0, 1)};
  auto ob = encode_extent_item(owned);
  CHECK(ob[24] == 172);
  CHECK(ob[25] == 2);  // 258 little-endian
  CHECK(ob[26] == 1);
  auto oback = decode_extent_item(Key{1 << 24, KeyType::EXTENT_ITEM, 4096}, ob);
  REQUIRE(oback);
  CHECK(oback->inline_refs[0] == ref_of(KeyType::EXTENT_OWNER_REF, 258));
  CHECK(extent_owner_root(*oback) == std::optional<u64>(258));
}

TEST_CASE("extent_owner_root: the first inline ref only, as the kernel reads it") {
  ExtentRecord rec;
  rec.flags = EXTENT_FLAG_DATA;
  CHECK(!extent_owner_root(rec));  // no inline ref at all (every ref keyed)
  rec.inline_refs = {ref_of(KeyType::EXTENT_DATA_REF, 257, 0, 300, 0, 1)};
  CHECK(!extent_owner_root(rec));  // written before simple quotas were enabled
  rec.inline_refs.insert(rec.inline_refs.begin(), ref_of(KeyType::EXTENT_OWNER_REF, 259));
  CHECK(extent_owner_root(rec) == std::optional<u64>(259));
  // An owner ref after another ref is out of the kernel's order: not the owner.
  std::swap(rec.inline_refs[0], rec.inline_refs[1]);
  CHECK(!extent_owner_root(rec));
}

TEST_CASE("extent items cut short are corrupt, wherever the cut falls") {
  ExtentRecord rec;
  rec.refs = 3;
  rec.flags = EXTENT_FLAG_DATA;
  rec.inline_refs = {ref_of(KeyType::EXTENT_DATA_REF, 5, 0, 300, 0, 1), ref_of(KeyType::SHARED_DATA_REF, 0, 8192, 0, 0, 2)};
  auto bytes = encode_extent_item(rec);
  for (std::size_t n = 24 + 1; n < bytes.size(); ++n) {
    if (n == 24 + 29) continue;  // ends after the first ref: a valid item with one ref
    auto r = decode_extent_item(Key{4096, KeyType::EXTENT_ITEM, 4096}, std::span<const u8>(bytes).first(n));
    REQUIRE_MESSAGE(!r, n);
    CHECK(r.error().code == Errc::corrupt);
  }
  // A tree block item too short for its btrfs_tree_block_info.
  auto info = decode_extent_item(Key{4096, KeyType::EXTENT_ITEM, 16384}, std::span<const u8>(MKFS_EXTENT_TREE_LEAF).first(30));
  REQUIRE(!info);
  CHECK(info.error().code == Errc::corrupt);
  CHECK(info.error().message.find("tree_block_info") != std::string::npos);
  // Shorter than btrfs_extent_item: the v0 format fsctl does not read.
  auto v0 = decode_extent_item(Key{4096, KeyType::EXTENT_ITEM, 4096}, std::span<const u8>(bytes).first(8));
  REQUIRE(!v0);
  CHECK(v0.error().code == Errc::unsupported);
}

TEST_CASE("store_extent_item rewrites an item of the same size only") {
  std::vector<u8> item = KERNEL_SHARED_LEAF;
  auto rec = decode_extent_item(Key{30982144, KeyType::EXTENT_ITEM, 16384}, item);
  REQUIRE(rec);
  rec->inline_refs[1].root = 7;
  REQUIRE(store_extent_item(item, *rec));
  CHECK(item[51] == KeyType::TREE_BLOCK_REF);
  CHECK(item[52] == 7);
  rec->inline_refs.pop_back();
  std::vector<u8> before = item;
  auto r = store_extent_item(item, *rec);
  REQUIRE(!r);
  CHECK(r.error().code == Errc::corrupt);
  CHECK(item == before);
}
