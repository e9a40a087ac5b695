// SPDX-License-Identifier: GPL-2.0-only
// DataRefs: the merged result is the same whether everything fits in memory
// or runs are spilled to the temporary file.
#include "lib/qgroup/data_refs.h"

#include <doctest/doctest.h>

#include <map>
#include <random>

using namespace fsctl;
using namespace fsctl::qgroup;

static std::map<u64, std::pair<u64, std::vector<u64>>> run(u64 budget, u64& runs, u64* passes = nullptr) {
  ctree::RootSets sets;
  DataRefs refs(sets, budget);
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    u64 extent = rng() % 30000;
    u64 root = 256 + rng() % 7;
    REQUIRE(refs.add({extent * 4096, 4096 + (extent % 3) * 4096, sets.single(root)}));
  }
  std::map<u64, std::pair<u64, std::vector<u64>>> out;
  u64 last = 0;
  bool first = true;
  REQUIRE(refs.for_each_extent([&](u64 bytenr, u64 num_bytes, u32 rs) {
    CHECK((first || bytenr > last));
    first = false;
    last = bytenr;
    out[bytenr] = {num_bytes, sets.sorted(rs)};
  }));
  runs = refs.spilled_runs();
  if (passes) *passes = refs.merge_passes();
  return out;
}

TEST_CASE("spilled and in-memory merges agree") {
  u64 runs_mem = 0, runs_spill = 0;
  auto a = run(64ULL << 20, runs_mem);
  auto b = run(16 * 1024, runs_spill);  // about 1000 records per run
  CHECK(runs_mem == 0);
  CHECK(runs_spill > 10);
  CHECK(a == b);
  CHECK(a.size() > 29000);
}

TEST_CASE("many spilled runs are merged in passes within the budget") {
  u64 runs_mem = 0, runs_spill = 0, passes = 0;
  auto a = run(64ULL << 20, runs_mem);
  auto b = run(1, runs_spill, &passes);  // 1024 records per run: ~190 runs, a fan-in of 4
  CHECK(runs_spill > 100);
  CHECK(passes > 40);
  CHECK(a == b);
}

TEST_CASE("a reference whose disk_num_bytes no file extent item can have is refused, naming the extent") {
  ctree::RootSets sets;
  DataRefs refs(sets, 64ULL << 20);
  u32 rs = sets.single(256);
  CHECK(refs.add({1ULL << 30, 128ULL << 20, rs}));  // the largest extent the kernel writes
  CHECK(refs.add({2ULL << 30, (16ULL << 40) - 4096, rs}));  // the largest one recorded
  for (u64 bad : {u64{0}, u64{512}, u64{4096 + 1}, u64{16ULL << 40}}) {
    auto r = refs.add({3ULL << 30, bad, rs});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::corrupt);
    CHECK(r.error().message.find("data extent 3221225472: disk_num_bytes " + std::to_string(bad)) != std::string::npos);
  }
  std::vector<u64> sizes;
  REQUIRE(refs.for_each_extent([&](u64, u64 num_bytes, u32) { sizes.push_back(num_bytes); }));
  CHECK(sizes == std::vector<u64>{128ULL << 20, (16ULL << 40) - 4096});
}
