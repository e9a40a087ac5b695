// SPDX-License-Identifier: GPL-2.0-only
// BlockGroupUsage: each block group's `used` change from the tree blocks a
// transaction allocates and frees, applied to its BLOCK_GROUP_ITEM by the
// commit's fixed point (kernel block-group.c btrfs_update_block_group,
// update_block_group_item). One part of the Transaction (transaction.h).
#pragma once
#include <map>
#include <set>

#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::fs {
class FsInfo;
}

namespace fsctl::transaction {

class Transaction;

class BlockGroupUsage {
 public:
  /// `bytes` allocated in the group starting at `start`.
  void allocated(u64 start, u64 bytes) {
    delta_[start] += static_cast<s64>(bytes);
    allocated_from_.insert(start);
  }
  /// `bytes` freed in the group starting at `start`.
  void freed(u64 start, u64 bytes) { delta_[start] -= static_cast<s64>(bytes); }
  /// Whether this transaction allocated from, or changed the usage of, the group.
  [[nodiscard]] bool touched(u64 start) const { return allocated_from_.count(start) || delta_.count(start); }
  [[nodiscard]] bool empty() const { return delta_.empty(); }

  /// Adds the queued deltas to the groups' BLOCK_GROUP_ITEM `used`, in the
  /// block group tree or the extent tree, whichever holds the item (during
  /// a conversion both are searched). Errors: Errc::corrupt (no item, a
  /// short one, a vanished group); tree errors.
  [[nodiscard]] Status apply(Transaction& t);
  /// After the commit: FsInfo's block groups get the `used` written.
  void committed(fs::FsInfo& fs) const;

 private:
  std::map<u64, s64> delta_;          // block group start -> used delta
  std::set<u64> allocated_from_;      // groups this transaction allocated from
  std::map<u64, u64> used_written_;   // block group start -> used written at commit
};

}  // namespace fsctl::transaction
