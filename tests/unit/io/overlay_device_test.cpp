// SPDX-License-Identifier: GPL-2.0-only
// OverlayDevice: reads see the lower device with the overlay's writes on top,
// the lower device is never written, the memory budget stops a rehearsal,
// and concurrent writers (the commit's write threads) are safe.
#include "lib/io/overlay_device.h"

#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "lib/io/memory_device.h"

using namespace fsctl;

namespace {
std::vector<u8> pattern(std::size_t n) {
  std::vector<u8> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<u8>(i * 7 + 3);
  return b;
}
}  // namespace

TEST_CASE("overlay: writes stay in memory, reads merge them over the lower device") {
  auto lower = io::make_memory_device(pattern(64 * 1024));
  auto budget = std::make_shared<io::OverlayBudget>();
  budget->limit = 1 << 20;
  auto ov = io::make_overlay_device(*lower, budget);
  std::vector<u8> w(5000, 0xAB);
  REQUIRE(ov->write_at(3000, w));  // crosses a page boundary: two partial pages
  std::vector<u8> got(64 * 1024);
  REQUIRE(ov->read_at(0, got));
  auto want = pattern(64 * 1024);
  for (std::size_t i = 3000; i < 8000; ++i) want[i] = 0xAB;
  CHECK(got == want);
  std::vector<u8> under(64 * 1024);
  REQUIRE(lower->read_at(0, under));
  CHECK(under == pattern(64 * 1024));
  CHECK(budget->used == 2 * 4096);
  CHECK(!budget->exceeded);
}

TEST_CASE("overlay: past its budget a write fails with nospc and marks the budget") {
  auto lower = io::make_memory_device(std::vector<u8>(64 * 1024));
  auto budget = std::make_shared<io::OverlayBudget>();
  budget->limit = 2 * 4096;
  auto ov = io::make_overlay_device(*lower, budget);
  std::vector<u8> w(4096, 1);
  CHECK(ov->write_at(0, w));
  CHECK(ov->write_at(4096, w));
  CHECK(ov->write_at(0, w));  // an existing page costs nothing
  auto r = ov->write_at(8192, w);
  REQUIRE(!r);
  CHECK(r.error().code == Errc::nospc);
  CHECK(budget->exceeded);
  CHECK(!ov->write_at(64 * 1024, w));  // past the end
}

TEST_CASE("overlay: concurrent writers to one overlay") {
  auto lower = io::make_memory_device(std::vector<u8>(4 << 20));
  auto budget = std::make_shared<io::OverlayBudget>();
  budget->limit = 8 << 20;
  auto ov = io::make_overlay_device(*lower, budget);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<u8> w(4096, static_cast<u8>(t + 1));
      for (u64 i = static_cast<u64>(t); i < 1024; i += 4) (void)ov->write_at(i * 4096, w);
    });
  for (auto& th : threads) th.join();
  std::vector<u8> got(4 << 20);
  REQUIRE(ov->read_at(0, got));
  for (u64 i = 0; i < 1024; ++i) CHECK(got[i * 4096 + 17] == static_cast<u8>(i % 4 + 1));
  CHECK(budget->used == 4u << 20);
}
