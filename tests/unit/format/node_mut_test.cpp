// SPDX-License-Identifier: GPL-2.0-only
// Moves of items and key pointers between sibling blocks (lib/format/
// node_mut.cpp, the copy part of the kernel's pushes): every moved and every
// remaining item keeps its key and bytes, item data stays packed (the tree
// checker's layout rules), counts and free space add up.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "lib/ctree/tree_checker.h"
#include "lib/format/node_layout.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {

constexpr u32 NS = 4096;

struct Block {
  std::vector<u8> data = std::vector<u8>(NS, 0);
  NodeMut mut() { return NodeMut(data, NS); }
  NodeView view() const { return NodeView(data); }
};

Block leaf_of(u64 first, u32 count, u32 size) {
  Block b;
  NodeMut m = b.mut();
  for (u32 i = 0; i < count; ++i) {
    m.leaf_insert(i, Key{first + i, 2, 0}, size + i);
    auto d = m.item_data(i);
    std::memset(d.data(), static_cast<int>(first + i), d.size());
  }
  return b;
}

// The leaf holds keys first.. in order with the bytes leaf_of wrote.
void check_leaf(const Block& b, u64 first, u32 count, u32 size_base_first) {
  REQUIRE(ctree::check_node_layout(b.data, NS));
  NodeView v = b.view();
  REQUIRE(v.nritems() == count);
  for (u32 i = 0; i < count; ++i) {
    u64 obj = first + i;
    CHECK(v.item_key(i) == Key{obj, 2, 0});
    u32 size = size_base_first + static_cast<u32>(obj - first);
    REQUIRE(v.item_size(i) == size);
    auto d = v.item_data(i);
    for (u8 c : d) REQUIRE(c == static_cast<u8>(obj));
  }
}

Block node_of(u64 first, u32 count) {
  Block b;
  b.data[offsetof(Header, level)] = 1;
  NodeMut m = b.mut();
  for (u32 i = 0; i < count; ++i) m.node_insert(i, Key{first + i, 2, 0}, (first + i) * NS, 7);
  return b;
}

void check_node(const Block& b, u64 first, u32 count) {
  REQUIRE(ctree::check_node_layout(b.data, NS));
  NodeView v = b.view();
  REQUIRE(v.nritems() == count);
  for (u32 i = 0; i < count; ++i) {
    CHECK(v.node_key(i) == Key{first + i, 2, 0});
    CHECK(v.blockptr(i) == (first + i) * NS);
    CHECK(v.ptr_generation(i) == 7);
  }
}

}  // namespace

TEST_CASE("node_mut: leaf items move to the left sibling and to the right sibling") {
  // left: keys 10..14 (sizes 100..104); right: keys 20..29 (sizes 50..59).
  for (u32 count : {0u, 1u, 4u, 10u}) {
    CAPTURE(count);
    Block left = leaf_of(10, 5, 100), right = leaf_of(20, 10, 50);
    u32 free_before = left.view().leaf_free_space() + right.view().leaf_free_space();
    u32 moved = right.view().leaf_space_used(0, count);
    NodeMut lm = left.mut(), rm = right.mut();
    leaf_move_to_left(lm, rm, count);
    check_leaf(right, 20 + count, 10 - count, 50 + count);
    REQUIRE(ctree::check_node_layout(left.data, NS));
    REQUIRE(left.view().nritems() == 5 + count);
    for (u32 i = 0; i < count; ++i) CHECK(left.view().item_key(5 + i) == Key{20 + i, 2, 0});
    CHECK(left.view().leaf_free_space() + right.view().leaf_free_space() == free_before);
    CHECK(right.view().leaf_space_used(0, right.view().nritems()) + moved == leaf_of(20, 10, 50).view().leaf_space_used(0, 10));
  }
  for (u32 count : {0u, 1u, 3u, 5u}) {
    CAPTURE(count);
    Block left = leaf_of(10, 5, 100), right = leaf_of(20, 10, 50);
    NodeMut lm = left.mut(), rm = right.mut();
    leaf_move_to_right(lm, rm, count);
    check_leaf(left, 10, 5 - count, 100);
    REQUIRE(ctree::check_node_layout(right.data, NS));
    REQUIRE(right.view().nritems() == 10 + count);
    for (u32 i = 0; i < count; ++i) {
      u64 obj = 10 + (5 - count) + i;
      CHECK(right.view().item_key(i) == Key{obj, 2, 0});
      CHECK(right.view().item_size(i) == 100 + (obj - 10));
      for (u8 c : right.view().item_data(i)) REQUIRE(c == static_cast<u8>(obj));
    }
    for (u32 i = 0; i < 10; ++i) {
      CHECK(right.view().item_key(count + i) == Key{20 + i, 2, 0});
      for (u8 c : right.view().item_data(count + i)) REQUIRE(c == static_cast<u8>(20 + i));
    }
  }
}

TEST_CASE("node_mut: a leaf emptied into an empty sibling, and zero-size items") {
  Block left = leaf_of(10, 6, 0), right;
  NodeMut lm = left.mut(), rm = right.mut();
  leaf_move_to_right(lm, rm, 6);
  CHECK(left.view().nritems() == 0);
  CHECK(left.view().leaf_free_space() == leaf_data_size(NS));
  check_leaf(right, 10, 6, 0);
  leaf_move_to_left(lm, rm, 6);
  check_leaf(left, 10, 6, 0);
  CHECK(right.view().nritems() == 0);
}

TEST_CASE("node_mut: key pointers move between sibling nodes") {
  Block left = node_of(10, 5), right = node_of(20, 8);
  NodeMut lm = left.mut(), rm = right.mut();
  node_move_to_left(lm, rm, 3);
  REQUIRE(left.view().nritems() == 8);
  CHECK(left.view().node_key(7) == Key{22, 2, 0});
  check_node(right, 23, 5);
  node_move_to_right(lm, rm, 8);
  CHECK(left.view().nritems() == 0);
  REQUIRE(right.view().nritems() == 13);
  CHECK(right.view().node_key(0) == Key{10, 2, 0});
  CHECK(right.view().node_key(7) == Key{22, 2, 0});
  CHECK(right.view().node_key(8) == Key{23, 2, 0});
}
