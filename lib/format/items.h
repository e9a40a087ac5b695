// SPDX-License-Identifier: GPL-2.0-only
// Item structs of the btrfs on-disk format, each named like the kernel's
// struct in include/uapi/linux/btrfs_tree.h, built from le wrappers (alignment 1).
#pragma once
#include <cstddef>

#include "lib/format/key.h"
#include "lib/format/le.h"
#include "lib/format/node_layout.h"
// The flag constants live with their codecs; included for the users of the structs.
#include "lib/format/chunk_item.h"       // BLOCK_GROUP_* type and profile bits, STRIPE_LEN
#include "lib/format/extent_item.h"      // EXTENT_FLAG_*, BLOCK_FLAG_FULL_BACKREF
#include "lib/format/file_extent.h"      // FILE_EXTENT_INLINE, _REG, _PREALLOC
#include "lib/format/free_space_info.h"  // FREE_SPACE_USING_BITMAPS
#include "lib/format/qgroup_items.h"     // QGROUP_STATUS_FLAG_*, QGROUP_LEVEL_SHIFT

namespace fsctl::format {

/// struct btrfs_stripe (32 bytes).
struct Stripe {
  le64 devid;
  le64 offset;  // physical byte offset on the device
  u8 dev_uuid[UUID_SIZE];
};
static_assert(sizeof(Stripe) == 32);

/// struct btrfs_chunk (48 bytes + num_stripes * 32).
struct ChunkHeader {
  le64 length;
  le64 owner;
  le64 stripe_len;
  le64 type;
  le32 io_align;
  le32 io_width;
  le32 sector_size;
  le16 num_stripes;
  le16 sub_stripes;
};
static_assert(sizeof(ChunkHeader) == 48);

/// struct btrfs_dev_extent (48 bytes).
struct DevExtent {
  le64 chunk_tree;
  le64 chunk_objectid;
  le64 chunk_offset;
  le64 length;
  u8 chunk_tree_uuid[UUID_SIZE];
};
static_assert(sizeof(DevExtent) == 48);

/// struct btrfs_block_group_item (24 bytes).
struct BlockGroupItem {
  le64 used;
  le64 chunk_objectid;
  le64 flags;
};
static_assert(sizeof(BlockGroupItem) == 24);


/// struct btrfs_extent_item (24 bytes).
struct ExtentItem {
  le64 refs;
  le64 generation;
  le64 flags;
};
static_assert(sizeof(ExtentItem) == 24);

/// struct btrfs_tree_block_info (18 bytes), after ExtentItem in non-skinny tree block extents.
struct TreeBlockInfo {
  DiskKey key;
  u8 level;
};
static_assert(sizeof(TreeBlockInfo) == 18);

/// struct btrfs_extent_data_ref (28 bytes).
struct ExtentDataRef {
  le64 root;
  le64 objectid;
  le64 offset;
  le32 count;
};
static_assert(sizeof(ExtentDataRef) == 28);

/// struct btrfs_shared_data_ref (4 bytes).
struct SharedDataRef {
  le32 count;
};
static_assert(sizeof(SharedDataRef) == 4);

/// struct btrfs_timespec (12 bytes).
struct Timespec {
  le64 sec;
  le32 nsec;
};
static_assert(sizeof(Timespec) == 12);

/// struct btrfs_inode_item (160 bytes).
struct InodeItem {
  le64 generation;
  le64 transid;
  le64 size;
  le64 nbytes;
  le64 block_group;
  le32 nlink;
  le32 uid;
  le32 gid;
  le32 mode;
  le64 rdev;
  le64 flags;
  le64 sequence;
  le64 reserved[4];
  Timespec atime, ctime, mtime, otime;
};
static_assert(sizeof(InodeItem) == 160);

/// struct btrfs_root_item (439 bytes; 239 in the legacy v1 form).
struct RootItem {
  InodeItem inode;
  le64 generation;
  le64 root_dirid;
  le64 bytenr;
  le64 byte_limit;
  le64 bytes_used;
  le64 last_snapshot;
  le64 flags;
  le32 refs;
  DiskKey drop_progress;
  u8 drop_level;
  u8 level;
  le64 generation_v2;
  u8 uuid[UUID_SIZE];
  u8 parent_uuid[UUID_SIZE];
  u8 received_uuid[UUID_SIZE];
  le64 ctransid, otransid, stransid, rtransid;
  Timespec ctime, otime, stime, rtime;
  le64 reserved[8];
};
static_assert(sizeof(RootItem) == 439);
static_assert(offsetof(RootItem, bytenr) == 176 && offsetof(RootItem, level) == 238 &&
              offsetof(RootItem, generation_v2) == 239);
inline constexpr std::size_t ROOT_ITEM_V1_SIZE = offsetof(RootItem, generation_v2);
inline constexpr u64 ROOT_SUBVOL_RDONLY = 1ULL << 0;

/// struct btrfs_root_ref (18 bytes + name).
struct RootRef {
  le64 dirid;
  le64 sequence;
  le16 name_len;
};
static_assert(sizeof(RootRef) == 18);

/// struct btrfs_inode_ref (10 bytes + name).
struct InodeRef {
  le64 index;
  le16 name_len;
};
static_assert(sizeof(InodeRef) == 10);

/// struct btrfs_inode_extref (18 bytes + name).
struct InodeExtref {
  le64 parent_objectid;
  le64 index;
  le16 name_len;
};
static_assert(sizeof(InodeExtref) == 18);

/// struct btrfs_dir_item (30 bytes + name + data).
struct DirItem {
  DiskKey location;
  le64 transid;
  le16 data_len;
  le16 name_len;
  u8 type;
};
static_assert(sizeof(DirItem) == 30);


/// struct btrfs_file_extent_item (53 bytes; inline extents end after `type`, at 21).
struct FileExtentItem {
  le64 generation;
  le64 ram_bytes;
  u8 compression;
  u8 encryption;
  le16 other_encoding;
  u8 type;
  le64 disk_bytenr;
  le64 disk_num_bytes;
  le64 offset;
  le64 num_bytes;
};
static_assert(sizeof(FileExtentItem) == 53);
inline constexpr std::size_t FILE_EXTENT_INLINE_DATA_START = offsetof(FileExtentItem, disk_bytenr);

/// struct btrfs_free_space_info (8 bytes).
struct FreeSpaceInfo {
  le32 extent_count;
  le32 flags;
};
static_assert(sizeof(FreeSpaceInfo) == 8);

/// struct btrfs_qgroup_status_item (40 bytes; 32 before SIMPLE_QUOTA's enable_gen).
struct QgroupStatusItem {
  le64 version;
  le64 generation;
  le64 flags;
  le64 rescan;
  le64 enable_gen;
};
static_assert(sizeof(QgroupStatusItem) == 40);

/// struct btrfs_qgroup_info_item (40 bytes).
struct QgroupInfoItem {
  le64 generation;
  le64 rfer;
  le64 rfer_cmpr;
  le64 excl;
  le64 excl_cmpr;
};
static_assert(sizeof(QgroupInfoItem) == 40);

/// struct btrfs_qgroup_limit_item (40 bytes).
struct QgroupLimitItem {
  le64 flags;
  le64 max_rfer;
  le64 max_excl;
  le64 rsv_rfer;
  le64 rsv_excl;
};
static_assert(sizeof(QgroupLimitItem) == 40);

/// struct btrfs_dev_stats_item is an array of le64 counters; struct
/// btrfs_balance_item and dev_replace are shown as hex.

}  // namespace fsctl::format
