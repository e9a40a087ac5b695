// SPDX-License-Identifier: GPL-2.0-only
// DIR_ITEM / DIR_INDEX / XATTR_ITEM codec (kernel btrfs_tree.h struct
// btrfs_dir_item followed by name and data; a DIR_ITEM or XATTR_ITEM may pack
// several entries whose names hash alike).
#pragma once
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/key.h"

namespace fsctl::format {

/// One entry of a directory or xattr item.
struct DirEntry {
  Key location{};   // the inode (INODE_ITEM key) or subvolume (ROOT_ITEM key) named
  u64 transid = 0;
  u8 type = 0;      // BTRFS_FT_*
  std::span<const u8> name;  // views into the decoded item bytes
  std::span<const u8> data;  // xattr value
};
/// Decodes every entry of the item, in item order. Errors: Errc::corrupt
/// naming the header, name or data that overruns the item.
[[nodiscard]] Result<std::vector<DirEntry>> decode_dir_item(std::span<const u8> data);
/// The item bytes of `entries`.
[[nodiscard]] std::vector<u8> encode_dir_item(const std::vector<DirEntry>& entries);

}  // namespace fsctl::format
