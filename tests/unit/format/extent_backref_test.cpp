// SPDX-License-Identifier: GPL-2.0-only
// Keyed extent backrefs (lib/format/extent_backref.h): key and body of each
// type, round trips, and sizes other than the type's (tree-checker.c
// check_simple_keyed_refs, check_extent_data_ref) are corrupt.
#include <doctest/doctest.h>

#include <vector>

#include "lib/format/extent_backref.h"

using namespace fsctl;
using namespace fsctl::format;

TEST_CASE("keyed backrefs: keys, bodies, round trips") {
  const u64 bytenr = 30408704;
  ExtentRef tbr;
  tbr.type = KeyType::TREE_BLOCK_REF;
  tbr.root = 257;
  ExtentRef sbr;
  sbr.type = KeyType::SHARED_BLOCK_REF;
  sbr.parent = 1 << 22;
  ExtentRef edr;
  edr.type = KeyType::EXTENT_DATA_REF;
  edr.root = 5;
  edr.objectid = 258;
  edr.offset = 0;
  edr.count = 3;
  ExtentRef sdr;
  sdr.type = KeyType::SHARED_DATA_REF;
  sdr.parent = 1 << 23;
  sdr.count = 2;

  auto t = encode_keyed_backref(bytenr, tbr);
  CHECK(t.key == Key{bytenr, KeyType::TREE_BLOCK_REF, 257});
  CHECK(t.data.empty());
  auto s = encode_keyed_backref(bytenr, sbr);
  CHECK(s.key == Key{bytenr, KeyType::SHARED_BLOCK_REF, 1 << 22});
  CHECK(s.data.empty());
  auto e = encode_keyed_backref(bytenr, edr);
  CHECK(e.key == Key{bytenr, KeyType::EXTENT_DATA_REF, hash_extent_data_ref(5, 258, 0)});
  CHECK(e.data.size() == 28);
  CHECK(e.data[24] == 3);
  auto d = encode_keyed_backref(bytenr, sdr);
  CHECK(d.key == Key{bytenr, KeyType::SHARED_DATA_REF, 1 << 23});
  CHECK(d.data == std::vector<u8>{2, 0, 0, 0});

  for (const ExtentRef& ref : {tbr, sbr, edr, sdr}) {
    auto item = encode_keyed_backref(bytenr, ref);
    auto back = decode_keyed_backref(item.key, item.data);
    REQUIRE(back);
    CHECK(*back == ref);
    CHECK(is_keyed_backref(ref.type));
  }
  CHECK(!is_keyed_backref(KeyType::EXTENT_ITEM));
  CHECK(!decode_keyed_backref(Key{bytenr, KeyType::EXTENT_ITEM, 4096}, {}));
}

TEST_CASE("keyed backrefs of the wrong size are corrupt") {
  std::vector<u8> four(4, 1), twenty_eight(28, 0);
  auto a = decode_keyed_backref(Key{4096, KeyType::TREE_BLOCK_REF, 5}, four);
  REQUIRE(!a);
  CHECK(a.error().code == Errc::corrupt);
  CHECK(a.error().message == "keyed TREE_BLOCK_REF of 4 bytes, expect 0");
  CHECK(!decode_keyed_backref(Key{4096, KeyType::SHARED_BLOCK_REF, 8192}, four));
  CHECK(!decode_keyed_backref(Key{4096, KeyType::SHARED_DATA_REF, 8192}, std::span<const u8>(four).first(3)));
  CHECK(!decode_keyed_backref(Key{4096, KeyType::SHARED_DATA_REF, 8192}, twenty_eight));
  auto e = decode_keyed_backref(Key{4096, KeyType::EXTENT_DATA_REF, 1}, std::span<const u8>(twenty_eight).first(27));
  REQUIRE(!e);
  CHECK(e.error().message == "keyed EXTENT_DATA_REF of 27 bytes, expect 28");
}
