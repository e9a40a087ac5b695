// SPDX-License-Identifier: GPL-2.0-only
// The superblock flag tables: names, unknown bits in hex, which bits block
// reading or writing (feature_flags.h).
#include "lib/format/feature_flags.h"

#include <doctest/doctest.h>

#include "lib/format/super.h"

using namespace fsctl;
using namespace fsctl::format;

TEST_CASE("hex prints hex, never decimal after 0x") {
  CHECK(hex(0x1000) == "0x1000");
  CHECK(hex(0) == "0x0");
  CHECK(hex(~0ULL) == "0xffffffffffffffff");
}

TEST_CASE("flag names: known bits by the kernel's name, unknown ones in hex") {
  CHECK(flag_names(SUPER_FLAG_SEEDING | 1, super_flag_bits()) == "WRITTEN | SEEDING");
  CHECK(flag_names(1ULL << 37, super_flag_bits()) == "unknown 0x2000000000");
  CHECK(flag_names(INCOMPAT_ZONED | (1ULL << 30), incompat_bits()) == "ZONED | unknown 0x40000000");
  CHECK(flag_names(0, compat_ro_bits()).empty());
}

TEST_CASE("unknown and unreadable bits") {
  CHECK(unknown_bits(SUPER_FLAG_METADUMP_V2 | (1ULL << 50), super_flag_bits()) == (1ULL << 50));
  CHECK(unreadable_bits(INCOMPAT_SKINNY_METADATA | INCOMPAT_ZONED, incompat_bits()) == INCOMPAT_ZONED);
  CHECK(unreadable_bits(INCOMPAT_REMAP_TREE | INCOMPAT_SIMPLE_QUOTA, incompat_bits()) == INCOMPAT_REMAP_TREE);
}

TEST_CASE("every bit of each table is a single bit, ascending, and named") {
  for (auto table : {super_flag_bits(), compat_ro_bits(), incompat_bits()}) {
    u64 prev = 0;
    for (auto& f : table) {
      CHECK(f.bit != 0);
      CHECK((f.bit & (f.bit - 1)) == 0);
      CHECK(f.bit > prev);
      CHECK(!f.name.empty());
      prev = f.bit;
    }
  }
}
