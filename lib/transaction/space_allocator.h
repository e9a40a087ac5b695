// SPDX-License-Identifier: GPL-2.0-only
// SpaceAllocator: where a transaction's new tree blocks go (kernel
// btrfs_free_space_ctl, find_free_extent with clusters). One part of the
// Transaction (transaction.h): the free metadata space of every metadata and
// system block group, as the free space tree lists it minus the superblock
// copies; block groups excluded by an operation (relocation targets); blocks
// freed by the transaction, pinned until its commit (invariant 1: a block the
// committed superblock reaches is never overwritten); blocks it allocated
// and freed again, reused first.
#pragma once
#include <list>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/ctree/block_source.h"
#include "lib/format/chunk_item.h"

namespace fsctl::fs {
class FsInfo;
}

namespace fsctl::transaction {

/// Free metadata space of one block group, in memory (from the free space
/// tree, minus superblock mirrors; kernel btrfs_free_space_ctl).
struct BlockGroupSpace {
  u64 start = 0, length = 0, flags = 0;
  std::map<u64, u64> free;  // logical start -> length
  u64 cursor = 0;           // where the last allocation ended (find's cluster)
  /// Blocks of this transaction freed again (behind the cursor), reused
  /// first, most recent first: the commit's blocks then stay contiguous
  /// instead of leaving one-block holes that split its write requests.
  std::vector<u64> reuse;
  // Its FREE_SPACE_INFO as committed (a group made by this transaction: one
  // extent), for the reservation's bound of extent<->bitmap conversions.
  u32 extent_count = 0;
  bool using_bitmaps = false;
};

class SpaceAllocator {
 public:
  /// Reads the free space of every metadata and system block group of `fs`
  /// through `src` (FREE_SPACE_EXTENT and FREE_SPACE_BITMAP items of the
  /// group's own key range: entries outside every group, left by mkfs 6.2,
  /// are never looked at), merges touching runs, removes the superblock
  /// copies (kernel exclude_super_stripes). Refuses, before anything is
  /// written, a FREE_SPACE_INFO whose extent_count does not count the free
  /// extents, an item crossing its group's end, and any free range the
  /// extent tree contradicts (a damaged free space tree must never make us
  /// write over live data). Errors: Errc::corrupt, Errc::unsupported (no free
  /// space tree); read errors.
  [[nodiscard]] Status load(ctree::BlockSource& src, const fs::FsInfo& fs);
  [[nodiscard]] bool loaded() const { return loaded_; }

  /// Adds a group (load, a new chunk, unit tests). System groups (flags with
  /// BLOCK_GROUP_SYSTEM) hold chunk tree blocks only.
  void add_group(BlockGroupSpace sp);
  /// Adds the space of a chunk created by this transaction: all of it free
  /// but the superblock copies, one free extent in its FREE_SPACE_INFO.
  void add_chunk(const format::Chunk& chunk);
  /// Removes the group starting at `start` for good (an emptied group).
  void remove_group(u64 start);

  /// A free `len`-byte range aligned to `nodesize` (the block size) in a
  /// SYSTEM group (`system`) or a metadata group, carved out of the free
  /// map; nullopt when none fits. Policy: blocks of this transaction freed
  /// again first (most recent first), then on from where the previous
  /// allocation ended while that free extent lasts, else the next free
  /// extent of at least 2 MiB (a cluster: the commit's blocks stay mostly
  /// contiguous and are written in few requests), and only then the first
  /// range that fits. Never an excluded group or a pinned block.
  [[nodiscard]] std::optional<u64> find(u64 len, bool system, u32 nodesize);

  /// The group holding logical `bytenr`, or nullptr.
  [[nodiscard]] BlockGroupSpace* group_of(u64 bytenr);
  /// The groups of one kind, in load order.
  [[nodiscard]] const std::list<BlockGroupSpace>& groups(bool system) const { return system ? sys_space_ : space_; }

  /// The allocator never places a block in these groups (logical starts)
  /// from now on: relocation targets, groups of another profile (convert=).
  void exclude(const std::set<u64>& starts) { excluded_.insert(starts.begin(), starts.end()); }
  [[nodiscard]] bool excluded(u64 start) const { return excluded_.count(start) > 0; }

  /// A committed block freed by the transaction: not reusable before the
  /// commit (invariant 1).
  void pin(u64 bytenr) { pinned_.insert(bytenr); }
  [[nodiscard]] const std::set<u64>& pinned() const { return pinned_; }
  /// A block this transaction allocated and freed again: its space is free
  /// at once and reused first.
  void give_back(u64 bytenr, u32 nodesize);

  /// Free bytes of the non-excluded metadata groups (not SYSTEM), counted in
  /// whole blocks of `nodesize`.
  [[nodiscard]] u64 free_metadata_bytes(u32 nodesize) const;

 private:
  std::optional<u64> find_in(std::list<BlockGroupSpace>& spaces, u64 len, u32 nodesize);

  bool loaded_ = false;
  // Lists: a BlockGroupSpace& stays valid while a new chunk's space is
  // appended (the free space tree code holds one across allocations).
  std::list<BlockGroupSpace> space_;      // metadata block groups (not SYSTEM)
  std::list<BlockGroupSpace> sys_space_;  // SYSTEM block groups: chunk tree blocks only
  std::set<u64> excluded_;
  std::set<u64> pinned_;
};

}  // namespace fsctl::transaction
