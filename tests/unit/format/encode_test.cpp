// SPDX-License-Identifier: GPL-2.0-only
// Extent item encoding and inline ref order. The expected order is the one
// the kernel writes and its tree checker demands (type ascending, value
// descending): seen on a kernel-made image as
//   key (5361664 METADATA_ITEM 0) refs 3 gen 9 flags TREE_BLOCK
//     tree block backref root 256
//     shared block backref parent 159612928
//     shared block backref parent 5357568
// and a relocated copy sorted ascending was rejected by kernel 6.x at mount
// ("inline ref out-of-order: has type 176 offset 257 seq 0x101, prev type 176
// seq 0x100").
#include <doctest/doctest.h>

#include "lib/format/extent_item.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {
ExtentRef tbr(u64 root) {
  ExtentRef r;
  r.type = KeyType::TREE_BLOCK_REF;
  r.root = root;
  return r;
}
ExtentRef sbr(u64 parent) {
  ExtentRef r;
  r.type = KeyType::SHARED_BLOCK_REF;
  r.parent = parent;
  return r;
}
}  // namespace

TEST_CASE("inline refs: the kernel's order survives decode, sort and encode") {
  ExtentRecord rec;
  rec.refs = 3;
  rec.generation = 9;
  rec.flags = EXTENT_FLAG_TREE_BLOCK;
  rec.inline_refs = {tbr(256), sbr(159612928), sbr(5357568)};
  auto bytes = encode_extent_item(rec);
  CHECK(bytes.size() == 51);  // itemsize 51 in the dump above
  auto back = decode_extent_item(Key{5361664, KeyType::METADATA_ITEM, 0}, bytes);
  REQUIRE(back);
  auto sorted = back->inline_refs;
  sort_inline_refs(sorted);
  REQUIRE(sorted.size() == 3);
  CHECK(sorted[0].root == 256);
  CHECK(sorted[1].parent == 159612928);
  CHECK(sorted[2].parent == 5357568);
  back->inline_refs = sorted;
  CHECK(encode_extent_item(*back) == bytes);
}

TEST_CASE("inline refs: a remapped parent moves to its descending place") {
  std::vector<ExtentRef> refs = {tbr(256), sbr(159612928), sbr(200000000)};  // 5357568 relocated to 200000000
  sort_inline_refs(refs);
  CHECK(refs[0].root == 256);
  CHECK(refs[1].parent == 200000000);
  CHECK(refs[2].parent == 159612928);
}

TEST_CASE("inline refs: roots descending within TREE_BLOCK_REF, types ascending") {
  std::vector<ExtentRef> refs = {sbr(4096), tbr(256), tbr(257)};
  sort_inline_refs(refs);
  CHECK(refs[0].root == 257);
  CHECK(refs[1].root == 256);
  CHECK(refs[2].type == KeyType::SHARED_BLOCK_REF);
}
