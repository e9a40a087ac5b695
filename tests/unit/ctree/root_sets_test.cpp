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

TEST_CASE("unite_all is the union of pairwise unions and interns only the result") {
  RootSets s;
  std::vector<fsctl::u32> singles;
  for (fsctl::u64 r = 256; r < 2256; ++r) singles.push_back(s.single(r));
  // The parents of a block shared by a snapshot chain, met in an order
  // unrelated to the snapshots' (a permutation of 256..2255, every other
  // one left out, and duplicates).
  std::vector<fsctl::u32> parents;
  for (std::size_t i = 0; i < singles.size(); i += 2) parents.push_back(singles[(i * 7919) % singles.size() & ~std::size_t{1}]);
  parents.push_back(parents.front());
  parents.push_back(0);
  std::size_t before = s.size();
  std::vector<fsctl::u32> ids = parents;
  fsctl::u32 all = s.unite_all(ids);
  CHECK(s.size() <= before + 1);
  fsctl::u32 pairwise = 0;
  for (fsctl::u32 p : parents) pairwise = s.unite(pairwise, p);
  CHECK(all == pairwise);
  std::set<fsctl::u64> want;
  for (fsctl::u32 p : parents)
    for (fsctl::u64 r : s.get(p)) want.insert(r);
  CHECK(s.sorted(all) == std::vector<fsctl::u64>(want.begin(), want.end()));
  // Edge cases: nothing, the empty set, one set, two sets.
  std::vector<fsctl::u32> none;
  CHECK(s.unite_all(none) == 0);
  std::vector<fsctl::u32> empties{0, 0};
  CHECK(s.unite_all(empties) == 0);
  std::vector<fsctl::u32> one{singles[3], singles[3]};
  CHECK(s.unite_all(one) == singles[3]);
  std::vector<fsctl::u32> two{singles[4], singles[5]};
  fsctl::u32 u45 = s.unite_all(two);
  CHECK(u45 == s.unite(singles[5], singles[4]));
  CHECK(s.get(u45).runs() == 1);
  // Many overlapping runs join into one.
  std::vector<fsctl::u32> spans;
  for (std::size_t i = 0; i + 10 < singles.size(); i += 5) {
    fsctl::u32 span = 0;
    for (std::size_t k = i; k < i + 10; ++k) span = s.unite(span, singles[k]);
    spans.push_back(span);
  }
  fsctl::u32 joined = s.unite_all(spans);
  CHECK(s.get(joined).runs() == 1);
}
