// SPDX-License-Identifier: GPL-2.0-only
// Decoding free space bitmaps into runs.
#include "lib/format/free_space.h"

namespace fsctl::format {

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
