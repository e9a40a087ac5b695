// SPDX-License-Identifier: GPL-2.0-only
// RootSets: interning and memoized unions used by the top-down walk.
#include <doctest/doctest.h>

#include "lib/ctree/tree_walk.h"

#include <set>

using namespace fsctl::ctree;

TEST_CASE("root sets are interned and unions are sorted and memoized") {
  RootSets s;
  auto a = s.single(257);
  auto b = s.single(5);
  CHECK(a == s.single(257));
  auto ab = s.unite(a, b);
  CHECK(s.sorted(ab) == std::vector<fsctl::u64>{5, 257});
  CHECK(s.unite(b, a) == ab);
  CHECK(s.unite(ab, a) == ab);
  CHECK(s.unite(0, a) == a);
  CHECK(s.get(0).empty());
}

TEST_CASE("unions of random sets match std::set, runs join neighbours") {
  RootSets s(2048);  // a tiny union memo: it is cleared many times, ids stay right
  std::vector<std::set<fsctl::u64>> ref{{}};
  std::vector<fsctl::u32> ids{0};
  for (fsctl::u64 r = 256; r < 356; ++r) {
    ids.push_back(s.single(r));
    ref.push_back({r});
  }
  fsctl::u64 x = 12345;
  auto rnd = [&] { return x = x * 6364136223846793005ULL + 1442695040888963407ULL, x >> 33; };
  for (int i = 0; i < 20000; ++i) {
    std::size_t a = rnd() % ids.size(), b = rnd() % ids.size();
    fsctl::u32 u = s.unite(ids[a], ids[b]);
    std::set<fsctl::u64> want = ref[a];
    want.insert(ref[b].begin(), ref[b].end());
    auto got = s.sorted(u);
    REQUIRE(std::vector<fsctl::u64>(want.begin(), want.end()) == got);
    CHECK(s.get(u).size() == want.size());
    ids.push_back(u);
    ref.push_back(want);
  }
  // Equal sets are one id, whichever way they were built.
  fsctl::u32 chain = 0;
  for (fsctl::u64 r = 300; r < 340; ++r) chain = s.unite(chain, s.single(r));
  fsctl::u32 back = 0;
  for (fsctl::u64 r = 339; r >= 300; --r) back = s.unite(s.single(r), back);
  CHECK(chain == back);
  CHECK(s.get(chain).runs() == 1);  // 40 consecutive roots: one run
}
