// SPDX-License-Identifier: GPL-2.0-only
// plan_chunk: the kernel's regular chunk allocation policy (sizes, holes,
// stripes per profile, refusals), super_mirror_ranges, and the chunk item
// encoder against the decoder. The expected sizes were checked against
// kernel 6.18 on this machine (a 1 GiB single-metadata image filled with
// small files got a 117440512-byte metadata chunk right after the mkfs
// chunks, as the first case here).
#include "lib/volumes/chunk_alloc.h"

#include <doctest/doctest.h>

#include "lib/format/items.h"
#include "lib/volumes/chunk_map.h"

using namespace fsctl;
using namespace fsctl::format;
using namespace fsctl::volumes;

namespace {
DeviceSpace dev(u64 devid, u64 total, std::map<u64, u64> allocated = {}) {
  DeviceSpace d;
  d.devid = devid;
  d.total_bytes = total;
  d.uuid[0] = static_cast<u8>(devid);
  d.allocated = std::move(allocated);
  return d;
}
}  // namespace

TEST_CASE("metadata on a small device: 10% of the device, rounded up to 16 MiB, first hole that fits") {
  // mkfs 6.2 -m single on 1 GiB: system at 1 MiB, metadata and data after it.
  std::vector<DeviceSpace> devs{dev(1, GiB, {{1 * MiB, 4 * MiB}, {5 * MiB, 8 * MiB}, {13 * MiB, 8 * MiB}})};
  auto p = plan_chunk(BLOCK_GROUP_METADATA, devs, 4096, 4096);
  REQUIRE(p);
  CHECK(p->chunk.length == 117440512);  // round_up(GiB / 10, 16 MiB) = 112 MiB
  CHECK(p->stripe_size == 117440512);
  REQUIRE(p->chunk.stripes.size() == 1);
  CHECK(p->chunk.stripes[0].physical == 21 * MiB);
  CHECK(p->chunk.stripes[0].dev_uuid[0] == 1);
  CHECK(p->chunk.num_stripes == 1);
  CHECK(p->chunk.sub_stripes == 1);
  CHECK(p->chunk.owner == EXTENT_TREE_OBJECTID);
  CHECK(p->chunk.stripe_len == STRIPE_LEN);
  CHECK(p->chunk.io_align == STRIPE_LEN);
  CHECK(p->chunk.sector_size == 4096);
  CHECK(p->chunk.type == BLOCK_GROUP_METADATA);
}

TEST_CASE("dup: two stripes back to back in one hole; the first hole below 1 MiB is never used") {
  std::vector<DeviceSpace> devs{dev(1, 10 * GiB)};
  auto p = plan_chunk(BLOCK_GROUP_METADATA | BLOCK_GROUP_DUP, devs, 4096, 16384);
  REQUIRE(p);
  CHECK(p->stripe_size == 256 * MiB);
  CHECK(p->chunk.length == 256 * MiB);
  REQUIRE(p->chunk.stripes.size() == 2);
  CHECK(p->chunk.stripes[0].physical == DEV_EXTENT_SEARCH_START);
  CHECK(p->chunk.stripes[1].physical == DEV_EXTENT_SEARCH_START + 256 * MiB);
}

TEST_CASE("large filesystems get 1 GiB metadata chunks; system chunks are 32 MiB") {
  std::vector<DeviceSpace> devs{dev(1, 100 * GiB)};
  auto m = plan_chunk(BLOCK_GROUP_METADATA, devs, 4096, 16384);
  REQUIRE(m);
  CHECK(m->chunk.length == GiB);
  auto s = plan_chunk(BLOCK_GROUP_SYSTEM | BLOCK_GROUP_DUP, devs, 4096, 16384);
  REQUIRE(s);
  CHECK(s->stripe_size == 32 * MiB);
  CHECK(s->chunk.length == 32 * MiB);
}

TEST_CASE("no hole big enough: the largest one, and the smallest chosen hole sizes the stripes") {
  // Holes: [1, 11) MiB and [20, 50) MiB; 30 MiB is the largest.
  std::vector<DeviceSpace> devs{dev(1, 50 * MiB, {{11 * MiB, 9 * MiB}})};
  auto p = plan_chunk(BLOCK_GROUP_METADATA, devs, 4096, 4096);
  REQUIRE(p);
  CHECK(p->chunk.stripes[0].physical == 20 * MiB);
  // 10% of 50 MiB = 5 MiB; rounded up to 16 MiB, at most the 30 MiB hole.
  CHECK(p->stripe_size == 16 * MiB);
}

TEST_CASE("raid1 needs two devices and puts one stripe on each; raid1c3 needs three") {
  std::vector<DeviceSpace> one{dev(1, 10 * GiB)};
  auto r = plan_chunk(BLOCK_GROUP_METADATA | BLOCK_GROUP_RAID1, one, 4096, 16384);
  REQUIRE(!r);
  CHECK(r.error().code == Errc::nospc);
  std::vector<DeviceSpace> two{dev(1, 10 * GiB), dev(2, 20 * GiB)};
  auto p = plan_chunk(BLOCK_GROUP_METADATA | BLOCK_GROUP_RAID1, two, 4096, 16384);
  REQUIRE(p);
  REQUIRE(p->chunk.stripes.size() == 2);
  CHECK(p->chunk.stripes[0].devid == 2);  // the device with more unallocated space first
  CHECK(p->chunk.stripes[1].devid == 1);
  CHECK(p->chunk.length == 256 * MiB);
  auto c3 = plan_chunk(BLOCK_GROUP_METADATA | BLOCK_GROUP_RAID1C3, two, 4096, 16384);
  REQUIRE(!c3);
  CHECK(c3.error().code == Errc::nospc);
}

TEST_CASE("raid10 over four devices: two data stripes, sub_stripes 2; raid0 over three") {
  std::vector<DeviceSpace> four{dev(1, 10 * GiB), dev(2, 10 * GiB), dev(3, 10 * GiB), dev(4, 10 * GiB)};
  auto p = plan_chunk(BLOCK_GROUP_METADATA | BLOCK_GROUP_RAID10, four, 4096, 16384);
  REQUIRE(p);
  CHECK(p->chunk.num_stripes == 4);
  CHECK(p->chunk.sub_stripes == 2);
  // 2 data stripes of 256 MiB exceed the 256 MiB chunk limit: 128 MiB each.
  CHECK(p->stripe_size == 128 * MiB);
  CHECK(p->chunk.length == 256 * MiB);
  std::vector<DeviceSpace> three{dev(1, 10 * GiB), dev(2, 10 * GiB), dev(3, 10 * GiB)};
  auto r0 = plan_chunk(BLOCK_GROUP_METADATA | BLOCK_GROUP_RAID0, three, 4096, 16384);
  REQUIRE(r0);
  CHECK(r0->chunk.num_stripes == 3);
  CHECK(r0->chunk.length == 3 * r0->stripe_size);
  CHECK(r0->chunk.length <= 256 * MiB + 3 * 16 * MiB);
}

TEST_CASE("refusals: no type, two profiles, raid5; a full device") {
  std::vector<DeviceSpace> devs{dev(1, 10 * GiB)};
  CHECK(plan_chunk(BLOCK_GROUP_DUP, devs, 4096, 4096).error().code == Errc::invalid_argument);
  CHECK(plan_chunk(BLOCK_GROUP_METADATA | BLOCK_GROUP_DUP | BLOCK_GROUP_RAID1, devs, 4096, 4096).error().code == Errc::invalid_argument);
  CHECK(plan_chunk(BLOCK_GROUP_METADATA | BLOCK_GROUP_RAID5, devs, 4096, 4096).error().code == Errc::unsupported);
  std::vector<DeviceSpace> full{dev(1, 100 * MiB, {{1 * MiB, 99 * MiB}})};
  CHECK(plan_chunk(BLOCK_GROUP_METADATA, full, 4096, 4096).error().code == Errc::nospc);
  // A hole below 64 KiB is no hole (dev_extent_min); dup needs 128 KiB.
  std::vector<DeviceSpace> tiny{dev(1, 100 * MiB, {{1 * MiB, 99 * MiB - 100 * 1024}})};
  CHECK(plan_chunk(BLOCK_GROUP_METADATA, tiny, 4096, 4096));
  CHECK(plan_chunk(BLOCK_GROUP_METADATA | BLOCK_GROUP_DUP, tiny, 4096, 4096).error().code == Errc::nospc);
}

TEST_CASE("take_plan: chunks planned in a row do not overlap") {
  std::vector<DeviceSpace> devs{dev(1, GiB)};
  u64 end = 0;
  int n = 0;
  for (;; ++n) {
    auto p = plan_chunk(BLOCK_GROUP_METADATA | BLOCK_GROUP_DUP, devs, 4096, 4096);
    if (!p) break;
    for (auto& s : p->chunk.stripes) {
      CHECK(s.physical >= end);
      end = s.physical + p->stripe_size;
    }
    take_plan(*p, devs);
  }
  CHECK(n > 3);
  CHECK(end <= GiB);
  CHECK(devs[0].used_bytes() == end - DEV_EXTENT_SEARCH_START);
}

TEST_CASE("super_mirror_ranges: the 64 MiB copy inside a single chunk, none in a chunk that misses it") {
  Chunk c;
  c.logical = 22 * MiB;
  c.length = 112 * MiB;
  c.type = BLOCK_GROUP_METADATA;
  c.num_stripes = 1;
  c.stripes.push_back({1, 21 * MiB, {}});
  auto r = super_mirror_ranges(c);
  REQUIRE(r.size() == 1);
  CHECK(r[0].first == 22 * MiB + (64 * MiB - 21 * MiB));
  CHECK(r[0].second == r[0].first + STRIPE_LEN);
  c.stripes[0].physical = 200 * MiB;
  CHECK(super_mirror_ranges(c).empty());
}

TEST_CASE("encode_chunk is the inverse of decode_chunk") {
  std::vector<DeviceSpace> devs{dev(1, 10 * GiB), dev(2, 10 * GiB)};
  auto p = plan_chunk(BLOCK_GROUP_SYSTEM | BLOCK_GROUP_RAID1, devs, 4096, 16384);
  REQUIRE(p);
  p->chunk.logical = 12345 * 4096;
  auto bytes = encode_chunk(p->chunk);
  CHECK(bytes.size() == sizeof(ChunkHeader) + 2 * sizeof(Stripe));
  auto back = decode_chunk(p->chunk.logical, bytes);
  REQUIRE(back);
  CHECK(back->length == p->chunk.length);
  CHECK(back->type == p->chunk.type);
  CHECK(back->io_width == STRIPE_LEN);
  CHECK(back->sub_stripes == 1);
  REQUIRE(back->stripes.size() == 2);
  CHECK(back->stripes[1].devid == p->chunk.stripes[1].devid);
  CHECK(back->stripes[1].physical == p->chunk.stripes[1].physical);
  CHECK(back->stripes[1].dev_uuid == p->chunk.stripes[1].dev_uuid);
}

TEST_CASE("DeviceSpace::add merges touching and overlapping ranges") {
  DeviceSpace d;
  d.add(10, 10);
  d.add(30, 10);
  d.add(20, 10);  // touches both: one range [10, 40)
  REQUIRE(d.allocated.size() == 1);
  CHECK(d.allocated.begin()->first == 10);
  CHECK(d.allocated.begin()->second == 30);
  d.add(5, 10);   // overlaps the start
  d.add(50, 5);   // apart
  d.add(12, 3);   // inside
  REQUIRE(d.allocated.size() == 2);
  CHECK(d.allocated.begin()->first == 5);
  CHECK(d.used_bytes() == 35 + 5);
}
