// SPDX-License-Identifier: GPL-2.0-only
// Balance filters: parsing and the kernel's selection rules (volumes.c
// chunk_usage_filter / chunk_usage_range_filter / chunk_drange_filter /
// chunk_vrange_filter, btrfs-balance(8)).
#include <doctest/doctest.h>

#include "lib/format/items.h"
#include "lib/relocation/filters.h"

using namespace fsctl;
using namespace fsctl::format;
using fsctl::relocation::BalanceFilters;

namespace {
Chunk chunk(u64 logical, u64 length, u64 type, std::vector<std::pair<u64, u64>> stripes) {
  Chunk c;
  c.logical = logical;
  c.length = length;
  c.type = type;
  c.num_stripes = static_cast<u16>(stripes.size());
  for (auto [devid, phys] : stripes) {
    ChunkStripe s;
    s.devid = devid;
    s.physical = phys;
    c.stripes.push_back(s);
  }
  return c;
}
}  // namespace

TEST_CASE("balance filters: usage=N selects used < N% (usage=0: empty only)") {
  auto c = chunk(1 << 30, 256 * MiB, BLOCK_GROUP_METADATA, {{1, 100 * MiB}});
  auto f = BalanceFilters::parse("usage=50");
  REQUIRE(f);
  CHECK(f->matches(c, 128 * MiB - 1));
  CHECK_FALSE(f->matches(c, 128 * MiB));
  auto z = BalanceFilters::parse("usage=0");
  REQUIRE(z);
  CHECK(z->matches(c, 0));
  CHECK_FALSE(z->matches(c, 4096));
  auto r = BalanceFilters::parse("usage=20..50");
  REQUIRE(r);
  CHECK_FALSE(r->matches(c, 20 * MiB));
  CHECK(r->matches(c, 256 * MiB / 5));
  CHECK_FALSE(r->matches(c, 128 * MiB));
  auto full = BalanceFilters::parse("usage=100");
  REQUIRE(full);
  CHECK_FALSE(full->matches(c, 256 * MiB));  // as the kernel: used < 100% of the length
}

TEST_CASE("balance filters: devid, drange, vrange, profiles, stripes") {
  auto dup = chunk(1 << 30, 256 * MiB, BLOCK_GROUP_METADATA | BLOCK_GROUP_DUP, {{1, 100 * MiB}, {1, 356 * MiB}});
  auto r1 = chunk(2ULL << 30, 256 * MiB, BLOCK_GROUP_METADATA | BLOCK_GROUP_RAID1, {{1, 612 * MiB}, {2, 1 * MiB}});
  auto d2 = BalanceFilters::parse("devid=2");
  REQUIRE(d2);
  CHECK_FALSE(d2->matches(dup, 0));
  CHECK(d2->matches(r1, 0));
  auto dr = BalanceFilters::parse("devid=1,drange=0..101");
  REQUIRE(dr);
  CHECK_FALSE(dr->matches(dup, 0));     // physical bytes [0, 101) lie below both stripes (100M, 356M)
  auto dr2 = BalanceFilters::parse("devid=1,drange=" + std::to_string(300 * MiB) + ".." + std::to_string(301 * MiB));
  REQUIRE(dr2);
  CHECK(dr2->matches(dup, 0));          // the first stripe [100M, 356M) covers it
  CHECK_FALSE(dr2->matches(r1, 0));     // the devid 1 stripe of r1 is [612M, 868M)
  auto vr = BalanceFilters::parse("vrange=0.." + std::to_string(1ULL << 30));
  REQUIRE(vr);
  CHECK_FALSE(vr->matches(dup, 0));     // end exclusive: [0, 1G) does not reach 1G
  auto vr2 = BalanceFilters::parse("vrange=" + std::to_string((1ULL << 30) + 1) + "..");
  REQUIRE(vr2);
  CHECK(vr2->matches(dup, 0));
  auto pr = BalanceFilters::parse("profiles=single|raid1");
  REQUIRE(pr);
  CHECK_FALSE(pr->matches(dup, 0));
  CHECK(pr->matches(r1, 0));
  auto st = BalanceFilters::parse("stripes=2..2");
  REQUIRE(st);
  CHECK(st->matches(dup, 0));
}

TEST_CASE("balance filters: bad input is refused with the filter named") {
  for (const char* bad : {"usage=101", "usage=abc", "limit=", "foo=1", "soft", "drange=1..2", "profiles=raid7", "vrange=5..1", "devid=0",
                          "convert=weird", "vrange=.."}) {
    auto f = BalanceFilters::parse(bad);
    CHECK_MESSAGE(!f, bad);
    if (!f) CHECK(f.error().code == Errc::invalid_argument);
  }
  auto ok = BalanceFilters::parse("usage=10,limit=2..5,convert=dup,soft");
  REQUIRE(ok);
  CHECK(*ok->limit_min == 2);
  CHECK(*ok->limit_max == 5);
  CHECK(*ok->convert == BLOCK_GROUP_DUP);
}
