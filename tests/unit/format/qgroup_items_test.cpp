// SPDX-License-Identifier: GPL-2.0-only
// Quota tree codecs (lib/format/qgroup_items.h): status in both sizes
// (32 bytes, and 40 with simple quotas' enable_gen), info, limit, relation.
#include <doctest/doctest.h>

#include <vector>

#include "lib/format/qgroup_items.h"

using namespace fsctl;
using namespace fsctl::format;

TEST_CASE("qgroup status: 32 and 40-byte forms round-trip; in place keeps the size") {
  QgroupStatusRecord s;
  s.generation = 9;
  s.flags = QGROUP_STATUS_FLAG_ON | QGROUP_STATUS_FLAG_INCONSISTENT;
  s.rescan = ~0ULL;
  auto short_form = encode_qgroup_status(s);
  CHECK(short_form.size() == 32);
  auto a = decode_qgroup_status(short_form);
  REQUIRE(a);
  CHECK(*a == s);
  CHECK(!a->has_enable_gen);

  s.flags |= QGROUP_STATUS_FLAG_SIMPLE_MODE;
  s.enable_gen = 7;
  s.has_enable_gen = true;
  auto long_form = encode_qgroup_status(s);
  CHECK(long_form.size() == 40);
  CHECK(long_form[32] == 7);
  auto b = decode_qgroup_status(long_form);
  REQUIRE(b);
  CHECK(*b == s);

  // Storing a record with enable_gen into a 32-byte item writes 32 bytes.
  std::vector<u8> item(32, 0);
  REQUIRE(store_qgroup_status(item, s));
  auto c = decode_qgroup_status(item);
  REQUIRE(c);
  CHECK(c->flags == s.flags);
  CHECK(!c->has_enable_gen);

  // An odd size between the two forms: its bytes past 32 are not a field and stay.
  std::vector<u8> odd(36, 0x77);
  auto o = decode_qgroup_status(odd);
  REQUIRE(o);
  CHECK(!o->has_enable_gen);
  REQUIRE(store_qgroup_status(odd, *o));
  CHECK(odd == std::vector<u8>(36, 0x77));

  for (std::size_t n = 0; n < 32; ++n) {
    auto r = decode_qgroup_status(std::span<const u8>(long_form).first(n));
    REQUIRE(!r);
    CHECK(r.error().code == Errc::corrupt);
    CHECK(r.error().message == "qgroup status item of " + std::to_string(n) + " bytes, expect at least 32");
  }
  std::vector<u8> tiny(16, 0);
  CHECK(!store_qgroup_status(tiny, s));
  CHECK(tiny == std::vector<u8>(16, 0));
}

TEST_CASE("qgroup info and limit: round trips, in place, short items") {
  QgroupInfoRecord i{12, 1 << 20, 1 << 20, 16384, 16384};
  auto ib = encode_qgroup_info(i);
  REQUIRE(ib.size() == 40);
  auto ir = decode_qgroup_info(ib);
  REQUIRE(ir);
  CHECK(*ir == i);
  std::vector<u8> item(40, 0xff);
  REQUIRE(store_qgroup_info(item, i));
  CHECK(item == ib);

  QgroupLimitRecord l{QGROUP_LIMIT_MAX_RFER, 1ULL << 30, 0, 0, 0};
  auto lb = encode_qgroup_limit(l);
  REQUIRE(lb.size() == 40);
  auto lr = decode_qgroup_limit(lb);
  REQUIRE(lr);
  CHECK(*lr == l);
  CHECK(encode_qgroup_limit({}) == std::vector<u8>(40, 0));

  for (std::size_t n = 0; n < 40; ++n) {
    auto a = decode_qgroup_info(std::span<const u8>(ib).first(n));
    REQUIRE(!a);
    CHECK(a.error().code == Errc::corrupt);
    CHECK(a.error().message == "qgroup info item of " + std::to_string(n) + " bytes, expect at least 40");
    auto b = decode_qgroup_limit(std::span<const u8>(lb).first(n));
    REQUIRE(!b);
    CHECK(b.error().message == "qgroup limit item of " + std::to_string(n) + " bytes, expect at least 40");
  }
}

TEST_CASE("qgroup relation: both halves give the same relation; same level is corrupt") {
  u64 member = 5, parent = (1ULL << QGROUP_LEVEL_SHIFT) | 100;
  auto keys = encode_qgroup_relation({member, parent});
  CHECK(keys[0] == Key{member, KeyType::QGROUP_RELATION, parent});
  CHECK(keys[1] == Key{parent, KeyType::QGROUP_RELATION, member});
  for (const Key& k : keys) {
    auto r = decode_qgroup_relation(k);
    REQUIRE(r);
    CHECK(r->member == member);
    CHECK(r->parent == parent);
  }
  auto bad = decode_qgroup_relation(Key{5, KeyType::QGROUP_RELATION, 6});
  REQUIRE(!bad);
  CHECK(bad.error().message == "relation between 0/5 and 0/6 of the same level");
  CHECK(qgroupid_to_string(parent) == "1/100");
  CHECK(qgroupid_level(parent) == 1);
  CHECK(qgroupid_id(parent) == 100);
}
