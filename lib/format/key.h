// SPDX-License-Identifier: GPL-2.0-only
// Keys, key types and well-known objectids (kernel: include/uapi/linux/btrfs_tree.h).
// Constants keep the kernel spelling minus BTRFS_ so grepping the kernel name finds them.
#pragma once
#include <compare>
#include <string>

#include "lib/base/ints.h"
#include "lib/format/le.h"

namespace fsctl::format {

/// Key types (btrfs_tree.h *_KEY). Stored as u8 in keys.
namespace KeyType {
inline constexpr u8 INODE_ITEM = 1, INODE_REF = 12, INODE_EXTREF = 13, XATTR_ITEM = 24, VERITY_DESC_ITEM = 36,
                    VERITY_MERKLE_ITEM = 37, ORPHAN_ITEM = 48, DIR_LOG_ITEM = 60, DIR_LOG_INDEX = 72, DIR_ITEM = 84,
                    DIR_INDEX = 96, EXTENT_DATA = 108, EXTENT_CSUM = 128, ROOT_ITEM = 132, ROOT_BACKREF = 144,
                    ROOT_REF = 156, EXTENT_ITEM = 168, METADATA_ITEM = 169, EXTENT_OWNER_REF = 172,
                    TREE_BLOCK_REF = 176, EXTENT_DATA_REF = 178, EXTENT_REF_V0 = 180, SHARED_BLOCK_REF = 182,
                    SHARED_DATA_REF = 184, BLOCK_GROUP_ITEM = 192, FREE_SPACE_INFO = 198, FREE_SPACE_EXTENT = 199,
                    FREE_SPACE_BITMAP = 200, DEV_EXTENT = 204, DEV_ITEM = 216, CHUNK_ITEM = 228,
                    RAID_STRIPE = 230, QGROUP_STATUS = 240, QGROUP_INFO = 242, QGROUP_LIMIT = 244,
                    QGROUP_RELATION = 246, TEMPORARY_ITEM = 248, PERSISTENT_ITEM = 249, DEV_REPLACE = 250,
                    UUID_SUBVOL = 251, UUID_RECEIVED_SUBVOL = 252, STRING_ITEM = 253;
}  // namespace KeyType

// Tree and special objectids (btrfs_tree.h).
inline constexpr u64 ROOT_TREE_OBJECTID = 1, EXTENT_TREE_OBJECTID = 2, CHUNK_TREE_OBJECTID = 3,
                     DEV_TREE_OBJECTID = 4, FS_TREE_OBJECTID = 5, ROOT_TREE_DIR_OBJECTID = 6,
                     CSUM_TREE_OBJECTID = 7, QUOTA_TREE_OBJECTID = 8, UUID_TREE_OBJECTID = 9,
                     FREE_SPACE_TREE_OBJECTID = 10, BLOCK_GROUP_TREE_OBJECTID = 11, RAID_STRIPE_TREE_OBJECTID = 12,
                     DEV_STATS_OBJECTID = 0, BALANCE_OBJECTID = static_cast<u64>(-4),
                     ORPHAN_OBJECTID = static_cast<u64>(-5), TREE_LOG_OBJECTID = static_cast<u64>(-6),
                     TREE_LOG_FIXUP_OBJECTID = static_cast<u64>(-7), TREE_RELOC_OBJECTID = static_cast<u64>(-8),
                     DATA_RELOC_TREE_OBJECTID = static_cast<u64>(-9), EXTENT_CSUM_OBJECTID = static_cast<u64>(-10),
                     FREE_SPACE_OBJECTID = static_cast<u64>(-11), FREE_INO_OBJECTID = static_cast<u64>(-12),
                     MULTIPLE_OBJECTIDS = static_cast<u64>(-255), FIRST_FREE_OBJECTID = 256,
                     LAST_FREE_OBJECTID = static_cast<u64>(-256), FIRST_CHUNK_TREE_OBJECTID = 256,
                     DEV_ITEMS_OBJECTID = 1;

/// is_fstree(): subvolume and snapshot trees (kernel ctree.h): 5 or [256, -256].
[[nodiscard]] constexpr bool is_fstree(u64 root_id) {
  return root_id == FS_TREE_OBJECTID || (root_id >= FIRST_FREE_OBJECTID && root_id <= LAST_FREE_OBJECTID);
}

/// A key in cpu byte order. Ordered by (objectid, type, offset), all unsigned
/// (kernel btrfs_comp_cpu_keys).
struct Key {
  u64 objectid = 0;
  u8 type = 0;
  u64 offset = 0;
  auto operator<=>(const Key&) const = default;
  bool operator==(const Key&) const = default;
};
inline constexpr Key KEY_MIN{0, 0, 0};
inline constexpr Key KEY_MAX{~0ULL, 0xff, ~0ULL};

/// struct btrfs_disk_key (17 bytes).
struct DiskKey {
  le64 objectid;
  u8 type;
  le64 offset;
  [[nodiscard]] Key to_cpu() const { return Key{objectid.get(), type, offset.get()}; }
  void set(const Key& k) {
    objectid.set(k.objectid);
    type = k.type;
    offset.set(k.offset);
  }
};
static_assert(sizeof(DiskKey) == 17);

/// "(objectid type offset)" with numbers, for messages.
[[nodiscard]] std::string key_to_string(const Key& k);

}  // namespace fsctl::format
