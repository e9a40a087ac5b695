// SPDX-License-Identifier: GPL-2.0-only
// RootSets: interning and memoized unions used by the top-down walk.
#include <doctest/doctest.h>

#include "lib/ctree/tree_walk.h"

using namespace fsctl::ctree;

TEST_CASE("root sets are interned and unions are sorted and memoized") {
  RootSets s;
  auto a = s.single(257);
  auto b = s.single(5);
  CHECK(a == s.single(257));
  auto ab = s.unite(a, b);
  CHECK(s.get(ab) == std::vector<fsctl::u64>{5, 257});
  CHECK(s.unite(b, a) == ab);
  CHECK(s.unite(ab, a) == ab);
  CHECK(s.unite(0, a) == a);
  CHECK(s.get(0).empty());
}
