// SPDX-License-Identifier: GPL-2.0-only
// SuperChanges: what a commit changes in the superblock's flag words besides
// the roots and the generation (Transaction::commit). Convert sets and
// clears CHANGING_BG_TREE and the BLOCK_GROUP_TREE compat_ro bit, and sets
// NO_HOLES; new RAID1C3/4 chunks add RAID1C34 by themselves.
#pragma once
#include "lib/base/ints.h"

namespace fsctl::transaction {

struct SuperChanges {
  u64 flags_set = 0, flags_clear = 0;          // superblock `flags` (SUPER_FLAG_*)
  u64 compat_ro_set = 0, compat_ro_clear = 0;  // compat_ro_flags (COMPAT_RO_*)
  u64 incompat_set = 0;                        // incompat_flags (INCOMPAT_*)
};

}  // namespace fsctl::transaction
