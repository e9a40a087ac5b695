// SPDX-License-Identifier: GPL-2.0-only
// Structural checks that prove what the write commands promise: every tree
// block has an extent item and is not free in the free space tree, every free
// space tree entry lies inside a block group, every block group item is in the
// tree the superblock's state says. Returns a report; never prints.
#pragma once
#include <string>
#include <vector>

#include "lib/fs/fs_info.h"

namespace fsctl::check {

struct CheckProblem {
  bool error = true;    // false: a warning (e.g. stale free space entries left by mkfs 6.2)
  std::string message;  // names the block or key
};

struct FsCheckReport {
  u64 tree_blocks = 0;        // blocks walked (each once)
  u64 free_space_items = 0;   // FREE_SPACE_INFO/EXTENT/BITMAP items read
  u64 block_groups = 0;
  std::vector<CheckProblem> problems;
  /// Facts worth saying that are not problems (btrfs check too says nothing
  /// of them), e.g. mkfs.btrfs 6.2's stale free space entries, folded into
  /// one line each.
  std::vector<std::string> notes;
  /// Trees whose walk stopped at a block that no mirror could give: their
  /// blocks below it are not checked (each is also a problem).
  u64 trees_incomplete = 0;
  /// Damaged copies of tree blocks read from another mirror instead.
  u64 bad_copies = 0;
  [[nodiscard]] u64 errors() const {
    u64 n = 0;
    for (auto& p : problems) n += p.error;
    return n;
  }
};

/// Walks every tree once (ctree::walk_trees) and checks each block against
/// the extent tree (a METADATA_ITEM or EXTENT_ITEM exists) and the free
/// space tree (the block is not listed free); checks every free space tree
/// entry against the block groups; checks that each block group item sits
/// in the tree the conversion state allows. REQUIRES: block groups loaded.
/// Errors: read errors (naming the bytenr); findings go into the report.
[[nodiscard]] Result<FsCheckReport> check_filesystem(fs::FsInfo& fs);

}  // namespace fsctl::check
