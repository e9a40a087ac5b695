// SPDX-License-Identifier: GPL-2.0-only
// Tree drop: removing a whole tree that may share blocks with other trees
// (snapshots, relocation trees), the kernel's snapshot deletion
// (extent-tree.c btrfs_drop_snapshot with walk_down_tree/walk_up_tree, its
// DROP_REFERENCE stage). The tree is walked top-down and never changed; for
// each child pointer of a node:
//  - the child's extent item says refs > 1: it is shared with another tree,
//    which keeps it; only this tree's reference goes (SHARED_BLOCK_REF of
//    the node when the node's extent item has FULL_BACKREF, else the
//    TREE_BLOCK_REF of this root, the node's owner), and the subtree is left
//    alone;
//  - refs == 1: the child is this tree's alone; it is descended into (a
//    leaf: every file extent's data reference goes, a SHARED_DATA_REF of the
//    leaf with FULL_BACKREF, else the EXTENT_DATA_REF of (owner, inode,
//    file offset - extent offset)), then freed (its last reference dropped).
// Data extents and tree blocks whose last reference goes are freed with
// their checksums (extent_ref_edit.h). The root node goes last.
// A subvolume's shared child made after the subvolume was created (pointer
// generation > ROOT_ITEM key offset) is first switched, with the part of
// its subtree made since, to full backrefs (SHARED_* refs keyed by the
// parent block, the kernel's UPDATE_BACKREF stage): the keyed refs naming
// this root must not outlive it. Relocation trees skip that (update_ref 0).
//
// Resumable in the kernel's own format: a step stops after about `units`
// tree blocks, at a child pointer, and records in the tree's ROOT_ITEM
// drop_progress = that pointer's key and drop_level = its node's level:
// everything left of it at that level and left of the path above it is
// dropped, the rest not. A step resumes there (the kernel's cleaner does
// too), and so does the kernel from a step of ours. After a kernel-written
// progress the first shared child's reference is checked before it is
// dropped, as the kernel does (wc->restarted, check_ref_exists).
#pragma once
#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/key.h"

namespace fsctl::transaction {

class Transaction;

/// Counters of a drop.
struct DropStats {
  u64 tree_blocks_freed = 0;     // blocks that were the tree's alone
  u64 shared_blocks_left = 0;    // shared children whose reference from this tree went
  u64 data_refs_dropped = 0;     // file extent references dropped
  u64 data_extents_freed = 0;    // data extents whose last reference went
  u64 data_bytes_freed = 0;      // their disk bytes
  u64 blocks_to_full_backref = 0;  // shared blocks switched to full backrefs first (subvolumes)
  DropStats& operator+=(const DropStats& o);
};

/// Where a step of a drop ended.
struct DropStep {
  bool finished = false;       // the tree is gone: its ROOT_ITEM (and ORPHAN item) deleted
  format::Key drop_progress{};  // else: where it resumes (recorded in the ROOT_ITEM)
  u8 drop_level = 0;
  u64 units = 0;               // tree blocks handled in this step
};

/// Drops tree `root_key.objectid` (ROOT_ITEM `root_key` in the root tree of
/// `t`) by up to about `units` tree blocks (at least one step of progress),
/// from the drop_progress its ROOT_ITEM records. At the end the ROOT_ITEM
/// goes, with the subvolume's ORPHAN item (ORPHAN_OBJECTID, ORPHAN_ITEM,
/// id) when there is one (kernel btrfs_del_root, btrfs_del_orphan_item);
/// otherwise drop_progress and drop_level are written into the ROOT_ITEM.
/// Qgroups are not touched (the caller's). REQUIRES: nothing else in `t`
/// uses the tree (Transaction::root was not called for it).
/// Errors: Errc::corrupt naming the bytenr for a block without its extent
/// item or reference, an owner that does not match the root, a block on
/// the resume path that is shared; read and tree errors.
[[nodiscard]] Result<DropStep> drop_tree_step(Transaction& t, const format::Key& root_key, u64 units, DropStats& stats);

}  // namespace fsctl::transaction
