// SPDX-License-Identifier: GPL-2.0-only
// Subvolume paths from ROOT_BACKREF items (root tree) and INODE_REF items of
// the parent subvolume (kernel btrfs_root_ref, btrfs_inode_ref).
#pragma once
#include <map>
#include <string>

#include "lib/fs/fs_info.h"

namespace fsctl::fs {

/// Path of every subvolume relative to the top level ("" for 5), e.g.
/// "snaps/home.ro". A subvolume without a back reference (deleted) is absent.
/// Errors: read errors of the root tree or a parent fs tree; Errc::corrupt
/// for malformed ref items or a loop in the directory chain.
[[nodiscard]] Result<std::map<u64, std::string>> subvolume_paths(FsInfo& fs);

}  // namespace fsctl::fs
