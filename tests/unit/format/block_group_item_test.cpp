// SPDX-License-Identifier: GPL-2.0-only
// BLOCK_GROUP_ITEM codec (lib/format/block_group_item.h).
#include <doctest/doctest.h>

#include <vector>

#include "lib/format/block_group_item.h"
#include "lib/format/items.h"

using namespace fsctl;
using namespace fsctl::format;

TEST_CASE("block group item: round trip, in-place store, short item") {
  BlockGroupRecord bg{131072, FIRST_CHUNK_TREE_OBJECTID, BLOCK_GROUP_METADATA | BLOCK_GROUP_DUP};
  auto bytes = encode_block_group_item(bg);
  REQUIRE(bytes.size() == 24);
  CHECK(bytes[0] == 0x00);
  CHECK(bytes[2] == 0x02);  // 131072 = 0x20000
  CHECK(bytes[9] == 0x01);  // 256
  CHECK(bytes[16] == 0x24);
  auto back = decode_block_group_item(bytes);
  REQUIRE(back);
  CHECK(*back == bg);

  // In place: only the 24 bytes of the struct change (a v2 item's tail stays).
  std::vector<u8> item(36, 0xee);
  REQUIRE(store_block_group_item(item, bg));
  CHECK(std::equal(bytes.begin(), bytes.end(), item.begin()));
  CHECK(item[24] == 0xee);
  auto v2 = decode_block_group_item(item);
  REQUIRE(v2);
  CHECK(*v2 == bg);

  for (std::size_t n = 0; n < 24; ++n) {
    auto r = decode_block_group_item(std::span<const u8>(bytes).first(n));
    REQUIRE(!r);
    CHECK(r.error().code == Errc::corrupt);
    CHECK(r.error().message == "block group item of " + std::to_string(n) + " bytes, expect at least 24");
    std::vector<u8> small(n, 0x11);
    CHECK(!store_block_group_item(small, bg));
    CHECK(small == std::vector<u8>(n, 0x11));
  }
}
