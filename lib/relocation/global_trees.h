// SPDX-License-Identifier: GPL-2.0-only
// The global trees of a relocation (relocate.h; DESIGN.md "Relocation for
// `balance -m`"): never shared, so their blocks in a target are moved by
// ordinary copy-on-write of a path through each. The plan finds them, the
// apply copies the paths until a walk finds none.
#pragma once
#include <functional>
#include <set>
#include <vector>

#include "lib/format/key.h"
#include "lib/transaction/transaction.h"

namespace fsctl::relocation {

/// Global trees moved by ordinary copy-on-write (never shared). The chunk
/// tree lives in SYSTEM block groups (the allocator places its copies in
/// other system groups); it is listed last so that chunk items changed by
/// the other trees' work are in place when it is walked.
inline constexpr u64 GLOBAL_TREES[] = {format::ROOT_TREE_OBJECTID,       format::EXTENT_TREE_OBJECTID,
                                       format::DEV_TREE_OBJECTID,        format::CSUM_TREE_OBJECTID,
                                       format::QUOTA_TREE_OBJECTID,      format::UUID_TREE_OBJECTID,
                                       format::FREE_SPACE_TREE_OBJECTID, format::BLOCK_GROUP_TREE_OBJECTID,
                                       format::RAID_STRIPE_TREE_OBJECTID, format::CHUNK_TREE_OBJECTID};

/// Search keys whose copy-on-write paths pass through every block of tree
/// `r` that `in_target` selects (the root: any key; another block: its key
/// in the parent). Reads the tree's nodes level by level, not its leaves;
/// adds the selected bytenrs to `found`. Errors: read errors.
[[nodiscard]] Result<std::vector<format::Key>> find_target_paths(transaction::Transaction& t, const ctree::WriteRoot& r,
                                                                 const std::function<bool(u64)>& in_target, std::set<u64>& found);

}  // namespace fsctl::relocation
