// SPDX-License-Identifier: GPL-2.0-only
// The free space tree's extent<->bitmap thresholds and bitmap item sizes
// (lib/format/free_space.h) against values worked out by hand from the
// kernel's formula (free-space-tree.c set_free_space_tree_thresholds):
//   bitmap_range = sectorsize * 2048 bits, num_bitmaps = ceil(length / range),
//   high = num_bitmaps * (25 + 256) / 25 (item header + bitmap, floor),
//   low = high - 100 when high > 100, else 0.
#include "lib/format/free_space.h"

#include <doctest/doctest.h>

using namespace fsctl;
using namespace fsctl::format;

TEST_CASE("free space thresholds: the kernel's values for common block group sizes") {
  // 256 MiB, 4K sectors: 32 bitmaps of 8 MiB, 32 * 281 = 8992 bytes,
  // 8992 / 25 = 359.68 -> 359; low 259.
  auto t = free_space_thresholds(256 * MiB, 4096);
  CHECK(t.bitmap_high_thresh == 359);
  CHECK(t.bitmap_low_thresh == 259);
  // 1 GiB, 4K: 128 bitmaps, 35968 bytes, / 25 = 1438.72 -> 1438; low 1338.
  t = free_space_thresholds(1024 * MiB, 4096);
  CHECK(t.bitmap_high_thresh == 1438);
  CHECK(t.bitmap_low_thresh == 1338);
  // 8 MiB, 4K (mkfs's first metadata group): 1 bitmap, 281 / 25 = 11.24
  // -> 11; high <= 100, so low 0: such a group never goes back to extents.
  t = free_space_thresholds(8 * MiB, 4096);
  CHECK(t.bitmap_high_thresh == 11);
  CHECK(t.bitmap_low_thresh == 0);
  // 32 MiB (a new metadata chunk on a small device): 4 bitmaps, 1124 / 25
  // = 44.96 -> 44; low 0.
  t = free_space_thresholds(32 * MiB, 4096);
  CHECK(t.bitmap_high_thresh == 44);
  CHECK(t.bitmap_low_thresh == 0);
}

TEST_CASE("free space thresholds: partial last bitmap, larger sectors, the 100 gap") {
  // 64 MiB: 8 bitmaps, 2248 / 25 = 89.92 -> 89, low 0; 64 MiB + 4K needs a
  // ninth bitmap: 2529 / 25 = 101.16 -> 101, the first high above 100, low 1.
  auto t = free_space_thresholds(64 * MiB, 4096);
  CHECK(t.bitmap_high_thresh == 89);
  CHECK(t.bitmap_low_thresh == 0);
  t = free_space_thresholds(64 * MiB + 4096, 4096);
  CHECK(t.bitmap_high_thresh == 101);
  CHECK(t.bitmap_low_thresh == 1);
  // 51.1875 MiB (53673984 bytes, not a multiple of 8 MiB): 7 bitmaps (6
  // full, one of 3.1875 MiB), 1967 / 25 = 78.68 -> 78.
  t = free_space_thresholds(53673984, 4096);
  CHECK(t.bitmap_high_thresh == 78);
  CHECK(t.bitmap_low_thresh == 0);
  // 1 GiB, 64K sectors: a bitmap covers 128 MiB, 8 of them, 89, low 0.
  t = free_space_thresholds(1024 * MiB, 65536);
  CHECK(t.bitmap_high_thresh == 89);
  CHECK(t.bitmap_low_thresh == 0);
  // 16 GiB, 16K sectors: 32 MiB per bitmap, 512 bitmaps, 143872 / 25 =
  // 5754.88 -> 5754, low 5654.
  t = free_space_thresholds(16384 * MiB, 16384);
  CHECK(t.bitmap_high_thresh == 5754);
  CHECK(t.bitmap_low_thresh == 5654);
}

TEST_CASE("free space bitmap item sizes: one bit per sector, rounded up to bytes") {
  CHECK(FREE_SPACE_BITMAP_SIZE == 256);
  CHECK(FREE_SPACE_BITMAP_BITS == 2048);
  CHECK(free_space_bitmap_size(8 * MiB, 4096) == 256);  // a full bitmap item
  CHECK(free_space_bitmap_size(4096, 4096) == 1);
  CHECK(free_space_bitmap_size(9 * 4096, 4096) == 2);
  CHECK(free_space_bitmap_size(3 * MiB + 192 * 1024, 4096) == 102);  // 816 sectors
  CHECK(free_space_bitmap_size(128 * MiB, 65536) == 256);
}
