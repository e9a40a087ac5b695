// SPDX-License-Identifier: GPL-2.0-only
// BufferPool (lib/io/buffer_pool.h): buffers given back are taken again
// (no fresh pages), the best fit is chosen, and the pool keeps no more than
// its limit.
#include "lib/io/buffer_pool.h"

#include <doctest/doctest.h>

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
  io::AlignedBuffer b = pool.take(4096, 512);  // smaller, weaker alignment: the kept one fits
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

TEST_CASE("the pool keeps at most its limit, preferring large buffers") {
  io::BufferPool pool(3 << 20);
  io::AlignedBuffer a = pool.take(1 << 20, 4096), b = pool.take(1 << 20, 4096), c = pool.take(2 << 20, 4096);
  pool.give(std::move(a));
  pool.give(std::move(b));
  CHECK(pool.kept_bytes() == (2 << 20));
  pool.give(std::move(c));  // 4 MiB would exceed 3: one 1 MiB buffer goes
  CHECK(pool.kept_bytes() == (3 << 20));
  io::AlignedBuffer d = pool.take(4 << 20, 4096);  // larger than the limit: never kept
  pool.give(std::move(d));
  CHECK(pool.kept_bytes() == (3 << 20));
  pool.set_max_kept(0);
  pool.give(pool.take(1 << 20, 4096));
  CHECK(pool.kept_bytes() <= (3 << 20));
}

TEST_CASE("GiveBackOnExit returns the buffer on every way out of a scope") {
  io::BufferPool pool(8 << 20);
  {
    io::AlignedBuffer buf = pool.take(1 << 20, 4096);
    io::GiveBackOnExit give_back(pool, buf);
  }
  CHECK(pool.kept_bytes() == (1 << 20));
}
