// SPDX-License-Identifier: GPL-2.0-only
// Codecs of the chunk and dev trees and the free space tree's info item:
// DEV_ITEM (lib/format/dev_item.h, also the superblock's copy), DEV_EXTENT
// (dev_extent.h), a sys_chunk_array entry (chunk_item.h), FREE_SPACE_INFO
// (free_space_info.h).
#include <doctest/doctest.h>

#include <vector>

#include "lib/format/chunk_item.h"
#include "lib/format/dev_extent.h"
#include "lib/format/dev_item.h"
#include "lib/format/free_space_info.h"
#include "lib/format/items.h"

using namespace fsctl;
using namespace fsctl::format;

TEST_CASE("DEV_ITEM: round trip, the superblock copy, in place, short item") {
  DevItemRecord d;
  d.devid = 1;
  d.total_bytes = 256ULL << 20;
  d.bytes_used = 92274688;
  d.io_align = d.io_width = d.sector_size = 4096;
  d.generation = 3;
  d.seek_speed = 1;
  d.bandwidth = 2;
  for (u8 i = 0; i < 16; ++i) {
    d.uuid[i] = i;
    d.fsid[i] = static_cast<u8>(0xf0 | i);
  }
  auto bytes = encode_dev_item(d);
  REQUIRE(bytes.size() == 98);
  CHECK(bytes[66] == 0);   // uuid at offset 66
  CHECK(bytes[82] == 0xf0);  // fsid at 82
  auto back = decode_dev_item(bytes);
  REQUIRE(back);
  CHECK(*back == d);
  CHECK(dev_item_from_disk(dev_item_to_disk(d)) == d);

  std::vector<u8> item(98, 0);
  REQUIRE(store_dev_item(item, d));
  CHECK(item == bytes);
  auto r = decode_dev_item(std::span<const u8>(bytes).first(97));
  REQUIRE(!r);
  CHECK(r.error().code == Errc::corrupt);
  CHECK(r.error().message == "DEV_ITEM of 97 bytes, expect at least 98");
}

TEST_CASE("DEV_EXTENT: round trip and short item") {
  DevExtentRecord e{CHUNK_TREE_OBJECTID, FIRST_CHUNK_TREE_OBJECTID, 30408704, 33554432, {}};
  e.chunk_tree_uuid[3] = 9;
  auto bytes = encode_dev_extent(e);
  REQUIRE(bytes.size() == 48);
  auto back = decode_dev_extent(bytes);
  REQUIRE(back);
  CHECK(*back == e);
  auto r = decode_dev_extent(std::span<const u8>(bytes).first(40));
  REQUIRE(!r);
  CHECK(r.error().message == "DEV_EXTENT of 40 bytes, expect at least 48");
}

TEST_CASE("sys_chunk_array entry: key then chunk, decodable as an array") {
  Chunk c;
  c.logical = 22020096;
  c.length = 8 << 20;
  c.owner = EXTENT_TREE_OBJECTID;
  c.stripe_len = STRIPE_LEN;
  c.type = BLOCK_GROUP_SYSTEM | BLOCK_GROUP_DUP;
  c.io_align = c.io_width = c.sector_size = 4096;
  c.num_stripes = 2;
  c.stripes = {{1, 22020096, {}}, {1, 30408704, {}}};
  auto entry = encode_sys_chunk_entry(c);
  CHECK(entry.size() == sys_chunk_entry_size(2));
  CHECK(entry.size() == 17 + 48 + 64);
  CHECK(entry[8] == KeyType::CHUNK_ITEM);
  auto chunks = decode_sys_chunk_array(entry, static_cast<u32>(entry.size()));
  REQUIRE(chunks);
  REQUIRE(chunks->size() == 1);
  CHECK((*chunks)[0] == c);
}

TEST_CASE("FREE_SPACE_INFO: round trip, in place, short item") {
  FreeSpaceInfoRecord f{359, FREE_SPACE_USING_BITMAPS};
  CHECK(f.using_bitmaps());
  auto bytes = encode_free_space_info(f);
  REQUIRE(bytes.size() == 8);
  auto back = decode_free_space_info(bytes);
  REQUIRE(back);
  CHECK(*back == f);
  std::vector<u8> item(8, 0);
  REQUIRE(store_free_space_info(item, {1, 0}));
  CHECK(item == std::vector<u8>{1, 0, 0, 0, 0, 0, 0, 0});
  auto r = decode_free_space_info(std::span<const u8>(bytes).first(7));
  REQUIRE(!r);
  CHECK(r.error().message == "FREE_SPACE_INFO of 7 bytes, expect at least 8");
  std::vector<u8> small(4, 0);
  CHECK(!store_free_space_info(small, f));
}
