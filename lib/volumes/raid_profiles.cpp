// SPDX-License-Identifier: GPL-2.0-only
// RAID profile table. RAID5/RAID6 are listed but not readable: fsctl refuses
// them with "unsupported profile" rather than guess parity rotation. The
// allocation columns are the kernel's btrfs_raid_array values (volumes.c,
// v6.x: RAID0 devs_min 1 and RAID10 devs_min 2 since "allow degenerate
// raid0/raid10").
#include "lib/volumes/raid_profiles.h"

#include "lib/format/items.h"

namespace fsctl::volumes {
using namespace fsctl::format;

const RaidProfile* raid_profile(u64 flags) {
  static const RaidProfile rows[] = {
      // flag, name, ncopies, striped, devs_min, readable, dev_stripes, devs_max, devs_increment, sub_stripes, nparity
      {0, "single", 1, false, 1, true, 1, 1, 1, 1, 0},
      {BLOCK_GROUP_DUP, "dup", 2, false, 1, true, 2, 1, 1, 1, 0},
      {BLOCK_GROUP_RAID0, "raid0", 1, true, 1, true, 1, 0, 1, 1, 0},
      {BLOCK_GROUP_RAID1, "raid1", 2, false, 2, true, 1, 2, 2, 1, 0},
      {BLOCK_GROUP_RAID1C3, "raid1c3", 3, false, 3, true, 1, 3, 3, 1, 0},
      {BLOCK_GROUP_RAID1C4, "raid1c4", 4, false, 4, true, 1, 4, 4, 1, 0},
      {BLOCK_GROUP_RAID10, "raid10", 2, true, 2, true, 1, 0, 2, 2, 0},
      {BLOCK_GROUP_RAID5, "raid5", 1, true, 2, false, 1, 0, 1, 1, 1},
      {BLOCK_GROUP_RAID6, "raid6", 1, true, 3, false, 1, 0, 1, 1, 2},
  };
  u64 p = flags & BLOCK_GROUP_PROFILE_MASK;
  for (auto& r : rows)
    if (r.flag == p) return &r;
  return nullptr;
}

}  // namespace fsctl::volumes
