// SPDX-License-Identifier: GPL-2.0-only
// Tree statistics of a whole filesystem: per tree height, nodes, leaves and
// bytes, from one top-down walk that reads every block once (shared blocks
// count for every tree that reaches them, as btrfs-progs tree-stats counts).
#pragma once
#include <string>
#include <vector>

#include "lib/fs/fs_info.h"

namespace fsctl::check {

struct TreeStat {
  u64 root_id = 0;
  u64 key_offset = 0;   // ROOT_ITEM key offset (snapshots/reloc trees)
  std::string name;
  u32 height = 0;       // root level + 1
  u64 nodes = 0;        // blocks of level > 0
  u64 leaves = 0;
  u64 bytes = 0;        // (nodes + leaves) * nodesize
  u64 items = 0;        // items in leaves
  bool skipped = false; // tree being deleted (refs 0): not walked
};

struct TreeStatsReport {
  std::vector<TreeStat> trees;
  u64 unique_blocks = 0;  // blocks read (each once)
  u64 unique_bytes = 0;
  u64 bytes_read = 0;     // device bytes read, including read-through gaps
  double seconds = 0;
};

/// Walks the root tree, the chunk tree and every tree with a ROOT_ITEM.
/// Errors: the first unreadable or invalid block (naming its bytenr).
[[nodiscard]] Result<TreeStatsReport> tree_stats(fs::FsInfo& fs);

}  // namespace fsctl::check
