// SPDX-License-Identifier: GPL-2.0-only
// ROOT_REF / ROOT_BACKREF codec (kernel btrfs_tree.h struct btrfs_root_ref
// followed by the name; keys (parent, ROOT_REF, child) and (child,
// ROOT_BACKREF, parent) in the root tree: where a subvolume is linked).
#pragma once
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::format {

/// A ROOT_REF / ROOT_BACKREF in cpu form.
struct RootRefRecord {
  u64 dirid = 0;             // directory inode of the parent tree holding the link
  u64 sequence = 0;          // DIR_INDEX of the link
  std::span<const u8> name;  // a view into the decoded item bytes
};
/// Errors: Errc::corrupt "root ref of N bytes, expect at least 18" or the
/// name overrunning the item.
[[nodiscard]] Result<RootRefRecord> decode_root_ref(std::span<const u8> data);
/// The item bytes of `r`.
[[nodiscard]] std::vector<u8> encode_root_ref(const RootRefRecord& r);

}  // namespace fsctl::format
