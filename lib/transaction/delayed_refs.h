// SPDX-License-Identifier: GPL-2.0-only
// DelayedRefs: the extent item changes of tree blocks a transaction
// allocates and frees, queued while trees change and applied by the commit's
// fixed point (kernel delayed-ref.c / extent-tree.c
// alloc_reserved_tree_block, __btrfs_free_extent). One part of the
// Transaction (transaction.h). Items with one inline TREE_BLOCK_REF (the
// only reference an unshared tree's block has), written in the form the
// superblock's SKINNY_METADATA bit says, found and dropped in either form
// (lib/ctree/tree_block_extent.h).
#pragma once
#include <map>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/key.h"
#include "lib/fs/fs_info.h"

namespace fsctl::transaction {

/// Whether new tree blocks get skinny METADATA_ITEMs (the SKINNY_METADATA
/// incompat bit) or the old EXTENT_ITEM with btrfs_tree_block_info.
[[nodiscard]] bool writes_skinny_metadata(const fs::FsInfo& fs);

class Transaction;

/// Who references a tree block and at which level: its extent item is
/// (bytenr, METADATA_ITEM, level) or (bytenr, EXTENT_ITEM, nodesize) with
/// one TREE_BLOCK_REF of `owner`.
struct BlockOwner {
  u64 owner = 0;
  u8 level = 0;
};

class DelayedRefs {
 public:
  /// A block new in this transaction needs its extent item (inserted at commit).
  void add(u64 bytenr, BlockOwner o) { adds_[bytenr] = o; }
  /// A committed block stops being referenced: its extent item goes at commit.
  void drop(u64 bytenr, BlockOwner o) { drops_[bytenr] = o; }
  /// A block of this transaction freed again: its pending add is cancelled,
  /// or, when an earlier commit round already inserted its item, that item
  /// is dropped.
  void forget_new(u64 bytenr, BlockOwner o) {
    if (!adds_.erase(bytenr)) drops_[bytenr] = o;
  }
  [[nodiscard]] bool empty() const { return adds_.empty() && drops_.empty(); }
  [[nodiscard]] std::size_t pending() const { return adds_.size() + drops_.size(); }

  /// Deletes the extent item (either form) of every queued drop from the
  /// extent tree of `t`. Errors: Errc::corrupt when an item is missing;
  /// tree errors.
  [[nodiscard]] Status apply_drops(Transaction& t);
  /// Inserts the extent item of every queued add still new in `t` (refs 1,
  /// generation transid, flags TREE_BLOCK, one TREE_BLOCK_REF of the owner):
  /// a METADATA_ITEM with SKINNY_METADATA, else an EXTENT_ITEM of nodesize
  /// whose btrfs_tree_block_info has the block's level and its first key
  /// now. A block whose drop is still queued under the same key (freed and
  /// allocated again between rounds: the allocator reuses such blocks
  /// first) takes that item over in place and cancels the drop.
  /// Errors: Errc::corrupt; tree errors.
  [[nodiscard]] Status apply_adds(Transaction& t);

 private:
  std::map<u64, BlockOwner> adds_;   // new blocks needing an extent item
  std::map<u64, BlockOwner> drops_;  // blocks whose extent item goes
};

}  // namespace fsctl::transaction
