// SPDX-License-Identifier: GPL-2.0-only
// Inode item codecs (kernel btrfs_tree.h; subvolume trees): INODE_ITEM
// (ino, INODE_ITEM, 0) struct btrfs_inode_item, INODE_REF (ino, INODE_REF,
// parent dir) a packed list of btrfs_inode_ref + name, INODE_EXTREF (ino,
// INODE_EXTREF, hash) a packed list of btrfs_inode_extref + name.
#pragma once
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::format {

/// A btrfs_timespec in cpu form.
struct TimespecRecord {
  u64 sec = 0;
  u32 nsec = 0;
  bool operator==(const TimespecRecord&) const = default;
};

/// An INODE_ITEM in cpu form.
struct InodeRecord {
  u64 generation = 0, transid = 0, size = 0, nbytes = 0, block_group = 0;
  u32 nlink = 0, uid = 0, gid = 0, mode = 0;
  u64 rdev = 0, flags = 0, sequence = 0;
  TimespecRecord atime, ctime, mtime, otime;
  bool operator==(const InodeRecord&) const = default;
};
/// Errors: Errc::corrupt "inode item of N bytes, expect at least 160".
[[nodiscard]] Result<InodeRecord> decode_inode_item(std::span<const u8> data);
/// The 160 bytes of `i` (reserved fields zero).
[[nodiscard]] std::vector<u8> encode_inode_item(const InodeRecord& i);

/// One name of an INODE_REF (parent = the key offset) or INODE_EXTREF item.
struct InodeRefEntry {
  u64 parent_objectid = 0;   // INODE_EXTREF only (INODE_REF: the key offset)
  u64 index = 0;             // DIR_INDEX of the name in the parent
  std::span<const u8> name;  // a view into the decoded item bytes
};
/// Decodes every entry of an INODE_REF item (`extref` false) or INODE_EXTREF
/// item (true), in item order; an empty item gives none. Errors:
/// Errc::corrupt naming the entry header or name that overruns the item.
[[nodiscard]] Result<std::vector<InodeRefEntry>> decode_inode_refs(std::span<const u8> data, bool extref);
/// The item bytes of `entries` (INODE_REF or, with `extref`, INODE_EXTREF).
[[nodiscard]] std::vector<u8> encode_inode_refs(const std::vector<InodeRefEntry>& entries, bool extref);

}  // namespace fsctl::format
