// SPDX-License-Identifier: GPL-2.0-only
// One row per RAID profile: how many copies, whether data is striped, minimum
// devices, and the chunk allocator's stripe rules (kernel volumes.c
// btrfs_raid_array).
#pragma once
#include <string>

#include "lib/base/ints.h"

namespace fsctl::volumes {

struct RaidProfile {
  u64 flag;            // BLOCK_GROUP_* profile bit (0 = single)
  const char* name;    // "single", "dup", ...
  int ncopies;         // copies of each byte (RAID10: 2)
  bool striped;        // RAID0/RAID10/RAID5/RAID6 rotate stripes
  int devs_min;
  bool readable;       // fsctl maps reads for it
  // Chunk allocation (kernel btrfs_raid_array, used by btrfs_create_chunk):
  int dev_stripes;     // stripes per device (DUP: 2, else 1)
  int devs_max;        // devices per chunk at most; 0 = as many as there are
  int devs_increment;  // the device count is rounded down to a multiple of this
  int sub_stripes;     // RAID10: 2, else 1 (the chunk item's sub_stripes)
  int nparity;         // RAID5: 1, RAID6: 2
};

/// The row for the profile bits of `flags`. Unknown combinations yield nullptr.
[[nodiscard]] const RaidProfile* raid_profile(u64 flags);

/// Stripes of a chunk of `num_stripes` that hold distinct data (copies and
/// parity excluded): (num_stripes - nparity) / ncopies, as the kernel's
/// calc_data_stripes (volumes.c). 0 when num_stripes <= nparity.
[[nodiscard]] inline u64 data_stripes(const RaidProfile& p, u64 num_stripes) {
  u64 parity = static_cast<u64>(p.nparity);
  return num_stripes <= parity ? 0 : (num_stripes - parity) / static_cast<u64>(p.ncopies);
}

}  // namespace fsctl::volumes
