// SPDX-License-Identifier: GPL-2.0-only
// qgroupid text form "level/id" (BTRFS_QGROUP_LEVEL_SHIFT = 48).
#include <doctest/doctest.h>

#include "lib/qgroup/qgroup.h"

using namespace fsctl::qgroup;

TEST_CASE("qgroupid round trip") {
  CHECK(qgroupid_to_string(257) == "0/257");
  CHECK(qgroupid_to_string((1ULL << 48) | 100) == "1/100");
  CHECK(parse_qgroupid("1/100") == ((1ULL << 48) | 100));
  CHECK(parse_qgroupid("258") == 258u);
  CHECK(!parse_qgroupid("1/x"));
  CHECK(!parse_qgroupid(""));
}
