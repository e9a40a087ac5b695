// SPDX-License-Identifier: GPL-2.0-only
// Relocation of tree blocks out of metadata block groups, preserving sharing
// (docs/DESIGN.md "Balance"): every tree block in a target block group is
// copied exactly once; every block that points at a copied block is copied
// too, up to the roots, through one old bytenr -> new bytenr memo, so a block
// shared by N snapshots gets one copy shared by the same N snapshots. Global
// trees (root, extent, csum, free space, quota, uuid, dev, block group) are
// moved by ordinary copy-on-write of their paths instead.
//
// Copies of subvolume-tree blocks keep every byte of the original except the
// header bytenr and child pointers: in particular the header generation (so
// parent pointer generations, ROOT_ITEM generations and the kernel's
// "generation <= last_snapshot means maybe shared" rule are unchanged) and
// the extent item (refs, flags, generation — the kernel's scrub compares the
// extent item generation with the header), with SHARED_BLOCK_REF parents
// remapped. Children and data extents referenced by full backref from a
// copied FULL_BACKREF block get their parent remapped. The set of roots
// reaching every block is unchanged, so no qgroup number changes and no
// extent needs qgroup tracing.
#pragma once
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lib/transaction/transaction.h"

namespace fsctl::relocation {

/// Counters of one relocation (JSON report fields of `fsctl balance`).
struct RelocationStats {
  u64 relocated_extents = 0;   // tree blocks that were in the target block groups
  u64 tree_blocks_copied = 0;  // subvolume-tree copies (targets + ancestors) + global-tree blocks in the targets (moved by COW)
  u64 ancestors_copied = 0;    // copies of blocks outside the targets, made because a child moved
  u64 backrefs_remapped = 0;   // full backrefs (SHARED_BLOCK_REF / SHARED_DATA_REF) whose parent changed
  /// Extents whose set of referencing roots changed and that qgroups would
  /// have to trace (the kernel's "qgroup dirty extents"). Counted while
  /// applying: a copy whose backref roots differ from its original's, which
  /// sharing-preserving relocation never makes.
  u64 qgroup_dirty_extents = 0;
};

/// The committed `used` (bytes) of the block group starting at logical
/// `start`, from its BLOCK_GROUP_ITEM in the block group tree or the extent
/// tree (FsInfo's block group list is as of open). Errors: Errc::corrupt
/// when no block group starts there, its item is missing or short.
[[nodiscard]] Result<u64> committed_block_group_used(fs::FsInfo& fs, u64 start);

/// What relocating a set of block groups will do, found by reading only.
class RelocationPlan {
 public:
  /// Reads the extent items in `targets` (logical starts of metadata block
  /// groups) and the nodes of every tree (leaves are not read).
  /// Tree block extent items may have either form (tree_block_extent.h).
  /// Errors: Errc::unsupported for data extents in a target (mixed block
  /// groups); Errc::corrupt for a block a tree reaches inside a target
  /// without its extent item, or a target
  /// whose BLOCK_GROUP_ITEM used differs from its tree blocks' bytes; read
  /// errors.
  [[nodiscard]] static Result<RelocationPlan> make(transaction::Transaction& t, const std::set<u64>& targets);

  /// Tree blocks found in the targets.
  [[nodiscard]] u64 target_blocks() const { return targets_.size(); }
  /// Subvolume-tree blocks to copy (targets reached from subvolume roots and
  /// their ancestors).
  [[nodiscard]] u64 subvolume_copies() const { return copy_.size(); }
  /// Reservation for apply(): every copy, the global trees' paths, and the
  /// extent tree edits.
  [[nodiscard]] transaction::Reservation reservation(u32 nodesize) const;

  /// Moves every tree block out of the targets in `t` (which must be the
  /// transaction the plan was made in). After commit the targets hold no
  /// tree block. Errors: Errc::corrupt for a backref that does not match
  /// the trees (a full backref to a parent not on any path, a missing
  /// extent item) or a target block no tree reaches; allocation errors
  /// (Errc::nospc); read errors. The transaction must then be abandoned.
  /// `moved`, when set, is told how many more tree blocks of the targets
  /// have been moved, as they are (its calls add up to target_blocks()).
  using MovedFn = std::function<void(u64 blocks)>;
  [[nodiscard]] Status apply(transaction::Transaction& t, RelocationStats& stats, const MovedFn& moved = {});

 private:
  /// Whether logical `bytenr` lies in one of the target block groups.
  [[nodiscard]] bool in_target(const fs::FsInfo& fs, u64 bytenr) const;

  // The steps of make() (relocate_plan.cpp), in order.
  [[nodiscard]] Status read_target_extents(transaction::Transaction& t);
  [[nodiscard]] Status read_subvolume_nodes(transaction::Transaction& t);
  void select_copies();
  [[nodiscard]] Status find_global_targets(transaction::Transaction& t);
  [[nodiscard]] Status check_targets_used(fs::FsInfo& fs) const;
  /// A block a tree reaches inside a target must have its extent item.
  [[nodiscard]] Status must_be_target(const fs::FsInfo& fs, u64 bytenr, u64 tree) const;

  // The steps of apply() (relocate_apply.cpp), in order. `memo`: original
  // bytenr -> copy's bytenr of every subvolume-tree block copied.
  using Memo = std::unordered_map<u64, u64>;
  [[nodiscard]] Status copy_subvolume_blocks(transaction::Transaction& t, Memo& memo, const MovedFn& moved);
  [[nodiscard]] Status update_root_items(transaction::Transaction& t, const Memo& memo);
  [[nodiscard]] Status move_extent_items(transaction::Transaction& t, const Memo& memo, RelocationStats& st, std::set<u64>& full_backref);
  [[nodiscard]] Status remap_full_backrefs(transaction::Transaction& t, const Memo& memo, const std::set<u64>& full_backref,
                                           RelocationStats& st);
  [[nodiscard]] Status cow_global_trees(transaction::Transaction& t);
  [[nodiscard]] Status check_targets_reached(const fs::FsInfo& fs, const Memo& memo) const;

  struct Node {
    u8 level = 0;
    std::vector<u64> children;
  };
  std::set<u64> bgs_;
  // Hash tables, not ordered maps: each is looked up per tree block or per
  // child pointer (tens of thousands per block group); whatever is visited
  // in an order (reads, extent-tree edits, the first error) is sorted first.
  std::unordered_map<u64, u8> targets_;                       // bytenr -> level of tree blocks in the targets
  /// Of each target's extent item, for the reservation: its bytes (item
  /// header included), its keyed backrefs, and whether it has FULL_BACKREF.
  struct ExtentShape {
    u32 item_bytes = 0;
    u32 keyed = 0;
    bool full_backref = false;
  };
  std::unordered_map<u64, ExtentShape> target_extents_;
  u8 root_height_ = 1;                                // root tree levels when planned
  std::unordered_map<u64, Node> nodes_;                    // subvolume-tree nodes (level >= 1) by bytenr
  std::unordered_map<u64, ctree::ParentCheck> checks_;     // expected header of each block seen (from its first parent)
  std::unordered_map<u64, u8> copy_;                        // subvolume-tree blocks to copy -> level
  std::vector<std::pair<u64, format::Key>> root_items_;  // subvolume root block -> its ROOT_ITEM key
  std::set<u64> global_found_;                        // global-tree blocks in the targets
};

}  // namespace fsctl::relocation
