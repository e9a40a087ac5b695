// SPDX-License-Identifier: GPL-2.0-only
// ChunkMap: logical -> physical per profile, overlap and boundary errors.
#include "lib/volumes/chunk_map.h"

#include <doctest/doctest.h>

using namespace fsctl;
using namespace fsctl::format;
using namespace fsctl::volumes;

static Chunk make_chunk(u64 logical, u64 length, u64 type, std::vector<std::pair<u64, u64>> stripes, u16 sub = 1) {
  Chunk c;
  c.logical = logical;
  c.length = length;
  c.type = type;
  c.stripe_len = STRIPE_LEN;
  c.num_stripes = static_cast<u16>(stripes.size());
  c.sub_stripes = sub;
  for (auto [devid, phys] : stripes) c.stripes.push_back({devid, phys, {}});
  return c;
}

TEST_CASE("single and dup map every copy at the same offset") {
  ChunkMap m;
  REQUIRE(m.add(make_chunk(1 << 20, 8 << 20, BLOCK_GROUP_METADATA | BLOCK_GROUP_DUP, {{1, 100 << 20}, {1, 200 << 20}})));
  auto r = m.map((1 << 20) + 16384, 16384);
  REQUIRE(r);
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].physical == (100u << 20) + 16384);
  CHECK((*r)[1].physical == (200u << 20) + 16384);
}

TEST_CASE("raid0 rotates stripes across devices") {
  ChunkMap m;
  REQUIRE(m.add(make_chunk(0, 4 << 20, BLOCK_GROUP_DATA | BLOCK_GROUP_RAID0, {{1, 1 << 20}, {2, 2 << 20}})));
  auto a = m.map(0, 4096);
  auto b = m.map(STRIPE_LEN, 4096);
  auto c = m.map(2 * STRIPE_LEN + 8192, 4096);
  REQUIRE((a && b && c));
  CHECK((*a)[0].devid == 1);
  CHECK((*a)[0].physical == 1u << 20);
  CHECK((*b)[0].devid == 2);
  CHECK((*b)[0].physical == 2u << 20);
  CHECK((*c)[0].devid == 1);
  CHECK((*c)[0].physical == (1u << 20) + STRIPE_LEN + 8192);
  CHECK(!m.map(STRIPE_LEN - 4096, 8192));  // crosses a stripe boundary
}

TEST_CASE("raid10 returns both mirrors of the stripe") {
  ChunkMap m;
  REQUIRE(m.add(make_chunk(0, 8 << 20, BLOCK_GROUP_METADATA | BLOCK_GROUP_RAID10,
                           {{1, 0}, {2, 0}, {3, 0}, {4, 0}}, 2)));
  auto r = m.map(STRIPE_LEN, 4096);  // second stripe: devices 3 and 4, row 0
  REQUIRE(r);
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].devid == 3);
  CHECK((*r)[1].devid == 4);
  auto s = m.map(2 * STRIPE_LEN, 4096);  // third stripe: devices 1 and 2, row 1
  REQUIRE(s);
  CHECK((*s)[0].devid == 1);
  CHECK((*s)[0].physical == STRIPE_LEN);
}

TEST_CASE("raid5 is refused as unsupported, unmapped logical is not_found, overlap is corrupt") {
  ChunkMap m;
  REQUIRE(m.add(make_chunk(0, 4 << 20, BLOCK_GROUP_DATA | BLOCK_GROUP_RAID5, {{1, 0}, {2, 0}, {3, 0}})));
  auto r = m.map(0, 4096);
  REQUIRE(!r);
  CHECK(r.error().code == Errc::unsupported);
  auto n = m.map(64 << 20, 4096);
  REQUIRE(!n);
  CHECK(n.error().code == Errc::not_found);
  auto o = m.add(make_chunk(1 << 20, 4 << 20, BLOCK_GROUP_DATA, {{1, 0}}));
  REQUIRE(!o);
  CHECK(o.error().code == Errc::corrupt);
}
