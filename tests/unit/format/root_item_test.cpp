// SPDX-License-Identifier: GPL-2.0-only
// ROOT_ITEM codec (lib/format/root_item.h): both sizes, and in-place edits
// that change only the fields asked for.
#include <doctest/doctest.h>

#include <vector>

#include "lib/format/items.h"
#include "lib/format/root_item.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {
RootInfo sample(bool v2) {
  RootInfo r;
  r.generation = 20;
  r.root_dirid = 256;
  r.bytenr = 30425088;
  r.bytes_used = 16384;
  r.last_snapshot = 15;
  r.flags = ROOT_SUBVOL_RDONLY;
  r.refs = 1;
  r.drop_progress = Key{300, KeyType::INODE_ITEM, 0};
  r.drop_level = 1;
  r.level = 2;
  r.v2 = v2;
  if (v2) {
    r.generation_v2 = 20;
    r.uuid[0] = 0xaa;
    r.parent_uuid[15] = 0xbb;
    r.received_uuid[7] = 0xcc;
    r.ctransid = 19;
    r.otransid = 3;
    r.stransid = 2;
    r.rtransid = 1;
  }
  return r;
}
}  // namespace

TEST_CASE("root item: v1 and v2 round-trip; layout offsets are the kernel's") {
  for (bool v2 : {false, true}) {
    RootInfo r = sample(v2);
    auto bytes = encode_root_item(r);
    CHECK(bytes.size() == (v2 ? 439u : 239u));
    CHECK(load_le<u64>(bytes.data() + 176) == r.bytenr);
    CHECK(load_le<u64>(bytes.data() + 200) == r.last_snapshot);
    CHECK(bytes[237] == r.drop_level);
    CHECK(bytes[238] == r.level);
    auto back = decode_root_item(bytes);
    REQUIRE(back);
    CHECK(*back == r);
  }
}

TEST_CASE("root item: store edits in place, keeping what RootInfo does not carry") {
  std::vector<u8> item(439);
  for (std::size_t i = 0; i < item.size(); ++i) item[i] = static_cast<u8>(i * 7);
  item[238] = 1;  // a valid level
  auto r = decode_root_item(item);
  REQUIRE(r);
  std::vector<u8> before = item;
  REQUIRE(store_root_item(item, *r));
  CHECK(item == before);  // nothing changed: every carried field written back as read
  r->bytenr = 0x1122334455667788ULL;
  r->level = 3;
  r->generation = r->generation_v2 = 99;
  REQUIRE(store_root_item(item, *r));
  for (std::size_t i = 0; i < item.size(); ++i) {
    bool changed = (i >= 160 && i < 168) || (i >= 176 && i < 184) || i == 238 || (i >= 239 && i < 247);
    if (!changed) CHECK_MESSAGE(item[i] == before[i], i);
  }
  auto again = decode_root_item(item);
  REQUIRE(again);
  CHECK(*again == *r);

  // A v1 item takes v1 fields only; a v2 record does not fit it.
  std::vector<u8> v1(239, 0);
  RootInfo s = sample(false);
  REQUIRE(store_root_item(v1, s));
  CHECK(decode_root_item(v1).value() == s);
  auto no = store_root_item(v1, sample(true));
  REQUIRE(!no);
  CHECK(no.error().code == Errc::corrupt);
}

TEST_CASE("root item: short or bad level is corrupt") {
  auto bytes = encode_root_item(sample(false));
  for (std::size_t n : {0u, 100u, 238u}) {
    auto r = decode_root_item(std::span<const u8>(bytes).first(n));
    REQUIRE(!r);
    CHECK(r.error().code == Errc::corrupt);
    CHECK(r.error().message == "root item of " + std::to_string(n) + " bytes, expect at least 239");
  }
  bytes[238] = 8;
  CHECK(!decode_root_item(bytes));
}
