// SPDX-License-Identifier: GPL-2.0-only
// One row per RAID profile: how many copies, whether data is striped, minimum
// devices (kernel volumes.c btrfs_raid_array).
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
};

/// The row for the profile bits of `flags`. Unknown combinations yield nullptr.
[[nodiscard]] const RaidProfile* raid_profile(u64 flags);

}  // namespace fsctl::volumes
