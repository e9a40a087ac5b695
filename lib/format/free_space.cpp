// SPDX-License-Identifier: GPL-2.0-only
// Decoding free space bitmaps into runs; the kernel's bitmap sizes and
// extent<->bitmap thresholds (free-space-tree.c).
#include "lib/format/free_space.h"

#include "lib/format/node_layout.h"

namespace fsctl::format {

FreeSpaceThresholds free_space_thresholds(u64 length, u32 sectorsize) {
  // Bitmaps pay off once the extent items' leaf bytes (a bare item header
  // each: FREE_SPACE_EXTENT items have no data) exceed the bitmaps'.
  u64 range = u64{sectorsize} * FREE_SPACE_BITMAP_BITS;
  u64 bitmaps = (length + range - 1) / range;
  u64 bitmap_bytes = bitmaps * (sizeof(Item) + FREE_SPACE_BITMAP_SIZE);
  FreeSpaceThresholds t;
  t.bitmap_high_thresh = static_cast<u32>(bitmap_bytes / sizeof(Item));
  // A gap of 100 extents keeps a group from going back and forth.
  t.bitmap_low_thresh = t.bitmap_high_thresh > 100 ? t.bitmap_high_thresh - 100 : 0;
  return t;
}

u32 free_space_bitmap_size(u64 length, u32 sectorsize) { return static_cast<u32>((length / sectorsize + 7) / 8); }

Status for_each_free_run(const Key& key, std::span<const u8> bits, u32 sectorsize,
                         const std::function<void(u64, u64)>& run_fn) {
  u64 nbits = key.offset / sectorsize;
  if (bits.size() * 8 < nbits)
    return make_error(Errc::corrupt, "free space bitmap " + key_to_string(key) + " is " + std::to_string(bits.size()) +
                                         " bytes, too short");
  u64 run = 0;
  for (u64 i = 0; i <= nbits; ++i) {
    bool set = i < nbits && ((bits[i / 8] >> (i % 8)) & 1);
    if (set) {
      ++run;
    } else if (run) {
      run_fn(key.objectid + (i - run) * sectorsize, run * sectorsize);
      run = 0;
    }
  }
  return {};
}

}  // namespace fsctl::format
