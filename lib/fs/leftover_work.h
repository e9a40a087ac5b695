// SPDX-License-Identifier: GPL-2.0-only
// Work the kernel left unfinished and resumes at the next read-write mount,
// found in the root tree:
// - a paused or interrupted balance: BALANCE_ITEM (BALANCE_OBJECTID,
//   TEMPORARY_ITEM, 0) (kernel volumes.c btrfs_recover_balance);
// - relocation trees of an interrupted balance, device remove or shrink:
//   ROOT_ITEM (TREE_RELOC_OBJECTID, ROOT_ITEM, N), the relocation copy of
//   subvolume N (kernel relocation.c btrfs_recover_relocation merges or drops
//   them at mount);
// - subvolumes being deleted: ROOT_ITEM with refs 0, dropped by the cleaner
//   (kernel btrfs_clean_one_deleted_snapshot); drop_progress says how far.
// Commands refuse what they cannot work around and report the rest (text
// NOTE and JSON), so a user learns what the next mount will do.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/fs/fs_info.h"

namespace fsctl::fs {

struct DroppingSubvolume {
  u64 root_id = 0;
  bool started = false;  // drop_progress set: the cleaner has freed part of it
  u8 drop_level = 0;
};

struct LeftoverWork {
  /// btrfs_balance_item.flags of a paused or interrupted kernel balance.
  std::optional<u64> balance_flags;
  /// Subvolume ids whose relocation tree remains (the TREE_RELOC key offset).
  std::vector<u64> relocation_trees;
  std::vector<DroppingSubvolume> dropping;
  [[nodiscard]] bool any() const { return balance_flags || !relocation_trees.empty() || !dropping.empty(); }
};

/// Reads the root tree's BALANCE_ITEM and the root entries of `fs`.
/// Errors: read errors of the root tree; Errc::corrupt for a BALANCE_ITEM of
/// the wrong size.
[[nodiscard]] Result<LeftoverWork> find_leftover_work(FsInfo& fs);

/// One sentence per kind of leftover work, each saying what left it and what
/// the kernel does with it at the next mount, e.g. "relocation trees of
/// subvolumes 5, 257 remain (ROOT_ITEM (TREE_RELOC ROOT_ITEM <subvolume>) in
/// the root tree), left by an interrupted kernel balance, device remove or shrink: the next
/// read-write mount merges them". Empty when there is nothing.
[[nodiscard]] std::vector<std::string> describe_leftover_work(const LeftoverWork& work);

}  // namespace fsctl::fs
