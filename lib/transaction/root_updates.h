// SPDX-License-Identifier: GPL-2.0-only
// RootUpdates: the trees a transaction changes, creates and deletes, and
// their ROOT_ITEMs, rewritten by the commit's fixed point (kernel
// transaction.c update_cowonly_root / commit_fs_roots, disk-io.c
// btrfs_create_tree, btrfs_del_root). One part of the Transaction
// (transaction.h). The root tree's and the chunk tree's roots go into the
// superblock instead (commit.cpp).
#pragma once
#include <map>
#include <set>
#include <utility>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/ctree/tree_writer.h"

namespace fsctl::fs {
class FsInfo;
}

namespace fsctl::transaction {

class Transaction;

class RootUpdates {
 public:
  /// Tree `root_id` as it is in this transaction: created on first use from
  /// its committed root (ROOT_ITEM, or the superblock for the root and chunk
  /// trees). Errors: Errc::not_found when the tree does not exist or was
  /// deleted by this transaction.
  [[nodiscard]] Result<ctree::WriteRoot*> root(const fs::FsInfo& fs, u64 root_id);
  /// Whether this transaction has the tree in use (changed or created).
  [[nodiscard]] bool has(u64 root_id) const { return roots_.count(root_id) > 0; }
  /// Whether this transaction deleted the tree.
  [[nodiscard]] bool deleted(u64 root_id) const { return deleted_.count(root_id) > 0; }
  /// The trees in use, by root id.
  [[nodiscard]] const std::map<u64, ctree::WriteRoot>& all() const { return roots_; }

  /// Creates an empty tree (one empty leaf) with its ROOT_ITEM (root_id,
  /// ROOT_ITEM, 0) in the root tree: refs 1, level 0, generation and
  /// generation_v2 = transid, bytes_used = nodesize, no uuid (kernel
  /// btrfs_create_tree for a global tree). Errors: Errc::invalid_argument
  /// when the tree exists; allocation and tree errors.
  [[nodiscard]] Result<ctree::WriteRoot*> create_tree(Transaction& t, u64 root_id);
  /// Deletes an unshared tree whole (kernel btrfs_clean_quota_tree +
  /// btrfs_del_root + btrfs_free_tree_block, progs btrfs_clear_tree): reads
  /// every block top-down, then frees each (extent item dropped at commit,
  /// space pinned until then) and removes the tree's ROOT_ITEM. Every block
  /// must be the tree's alone (its owner, one TREE_BLOCK_REF of the tree:
  /// Transaction::free_tree_block checks it), else the error comes before
  /// any commit (the caller abandons the transaction: nothing written).
  /// Errors: Errc::unsupported (a shared or foreign block), Errc::corrupt
  /// (an extent item missing); read and tree errors.
  [[nodiscard]] Status delete_tree(Transaction& t, u64 root_id);
  /// Rewrites the ROOT_ITEM (bytenr, level, generation, generation_v2) of
  /// every tree whose root moved, until the root tree's own copy stops
  /// changing them. Errors: Errc::corrupt (a missing or short ROOT_ITEM).
  [[nodiscard]] Status apply(Transaction& t);

 private:
  std::map<u64, ctree::WriteRoot> roots_;
  std::map<u64, std::pair<u64, u8>> written_;  // root id -> (bytenr, level) in its ROOT_ITEM
  std::set<u64> deleted_;                       // trees removed by delete_tree in this transaction
};

}  // namespace fsctl::transaction
