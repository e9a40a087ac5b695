// SPDX-License-Identifier: GPL-2.0-only
// BufferPool (lib/io/buffer_pool.h): buffers given back are taken again
// (no fresh pages), the best fit is chosen (never more than twice the size
// asked for), and the buffers kept and lent out stay within its limit.
#include "lib/io/buffer_pool.h"

#include <doctest/doctest.h>

#include <vector>

using namespace fsctl;

TEST_CASE("a buffer given back to the pool is the one taken next, aligned and large enough") {
  io::BufferPool pool(64 << 20);
  io::AlignedBuffer a = pool.take(1 << 20, 4096);
  REQUIRE(a.data() != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(a.data()) % 4096 == 0);
  CHECK(a.size() == (1 << 20));
  const u8* first = a.data();
  pool.give(std::move(a));
  CHECK(pool.kept_bytes() == (1 << 20));
  io::AlignedBuffer b = pool.take(512 << 10, 512);  // smaller, weaker alignment: the kept one fits
  CHECK(b.data() == first);
  CHECK(pool.kept_bytes() == 0);
  io::AlignedBuffer c = pool.take(4096, 8192);  // stronger alignment than any kept: a new one
  CHECK(reinterpret_cast<std::uintptr_t>(c.data()) % 8192 == 0);
  pool.give(std::move(b));
  pool.give(std::move(c));
  CHECK(pool.kept_bytes() == (1 << 20) + 4096);
}

TEST_CASE("the pool takes the smallest kept buffer that fits") {
  io::BufferPool pool(64 << 20);
  io::AlignedBuffer big = pool.take(8 << 20, 4096), small = pool.take(1 << 20, 4096);
  const u8* small_bytes = small.data();
  pool.give(std::move(big));
  pool.give(std::move(small));
  io::AlignedBuffer got = pool.take(512 << 10, 4096);
  CHECK(got.data() == small_bytes);
  CHECK(pool.kept_bytes() == (8 << 20));
}

TEST_CASE("the pool keeps at most its limit with what is lent out, preferring large buffers") {
  io::BufferPool pool(3 << 20);
  io::AlignedBuffer a = pool.take(1 << 20, 4096);
  pool.give(std::move(a));
  CHECK(pool.kept_bytes() == (1 << 20));
  io::AlignedBuffer b = pool.take(1 << 20, 4096);  // the kept one
  CHECK(pool.kept_bytes() == 0);
  io::AlignedBuffer c = pool.take(2 << 20, 4096);  // new: 1 lent + 2 = 3 MiB
  pool.give(std::move(b));                          // 2 lent + 1 kept
  CHECK(pool.kept_bytes() == (1 << 20));
  pool.give(std::move(c));
  CHECK(pool.kept_bytes() == (3 << 20));
  io::AlignedBuffer d = pool.take(4 << 20, 4096);  // larger than the limit: the kept ones are freed for it
  CHECK(pool.kept_bytes() == 0);
  pool.give(std::move(d));  // and it is never kept
  CHECK(pool.kept_bytes() == 0);
  io::AlignedBuffer x = pool.take(2 << 20, 4096), y = pool.take(1 << 20, 4096);
  pool.give(std::move(x));
  pool.give(std::move(y));  // kept: 2 + 1
  CHECK(pool.kept_bytes() == (3 << 20));
  io::AlignedBuffer e = pool.take(1 << 20, 4096);  // the 1 MiB one (the 2 MiB one fits too, but is larger)
  CHECK(pool.kept_bytes() == (2 << 20));
  io::AlignedBuffer f = pool.take(256 << 10, 4096);  // the 2 MiB one is over twice its size: a new one
  CHECK(f.size() == (256 << 10));
  CHECK(pool.kept_bytes() == 0);  // 2 kept + 1 lent + 0.25 new would pass 3: the 2 MiB one was freed
  pool.give(std::move(e));
  pool.give(std::move(f));
  pool.set_max_kept(0);
  pool.give(pool.take(1 << 20, 4096));
  CHECK(pool.kept_bytes() <= (3 << 20));
}

TEST_CASE("one-block reads do not hold the large kept buffers, and kept + lent stays within the limit") {
  // A balance batch: 3 MiB reads gave their buffers back, then 64 read-ahead
  // slots of one-block runs each took one of them (66 MiB of pooled buffers
  // for an I/O budget of 24).
  const std::size_t limit = 24 << 20;
  io::BufferPool pool(limit);
  std::vector<io::AlignedBuffer> big;
  for (int i = 0; i < 8; ++i) big.push_back(pool.take(3 << 20, 4096));
  for (auto& b : big) pool.give(std::move(b));
  CHECK(pool.kept_bytes() == limit);
  std::vector<io::AlignedBuffer> slots;
  for (int i = 0; i < 64; ++i) {
    slots.push_back(pool.take(16 << 10, 4096));
    CHECK(slots.back().size() == (16 << 10));
    CHECK(pool.kept_bytes() + (i + 1) * (16 << 10) <= limit);
  }
  for (auto& b : slots) pool.give(std::move(b));
  CHECK(pool.kept_bytes() <= limit);
}

TEST_CASE("GiveBackOnExit returns the buffer on every way out of a scope") {
  io::BufferPool pool(8 << 20);
  {
    io::AlignedBuffer buf = pool.take(1 << 20, 4096);
    io::GiveBackOnExit give_back(pool, buf);
  }
  CHECK(pool.kept_bytes() == (1 << 20));
}
