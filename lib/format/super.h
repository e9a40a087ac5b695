// SPDX-License-Identifier: GPL-2.0-only
// struct btrfs_super_block, btrfs_dev_item, btrfs_root_backup (kernel
// btrfs_tree.h) and the feature/flag bits the superblock carries.
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "lib/base/result.h"
#include "lib/format/le.h"
#include "lib/format/node_layout.h"

namespace fsctl::format {

inline constexpr u64 SUPER_MAGIC = 0x4D5F53665248425FULL;  // "_BHRfS_M"
inline constexpr u32 SUPER_INFO_SIZE = 4096;
inline constexpr u32 SUPER_INFO_OFFSET = 65536;
inline constexpr int SUPER_MIRROR_MAX = 3;
inline constexpr u32 SYSTEM_CHUNK_ARRAY_SIZE = 2048;
inline constexpr int NUM_BACKUP_ROOTS = 4;
inline constexpr u32 LABEL_SIZE = 256;

/// Physical offset of superblock copy `mirror` (0..2): 64 KiB, 64 MiB, 256 GiB
/// (kernel btrfs_sb_offset).
[[nodiscard]] constexpr u64 super_mirror_offset(int mirror) {
  return mirror == 0 ? SUPER_INFO_OFFSET : (16ULL * 1024) << (12 * mirror);
}

// compat_ro bits.
inline constexpr u64 COMPAT_RO_FREE_SPACE_TREE = 1ULL << 0, COMPAT_RO_FREE_SPACE_TREE_VALID = 1ULL << 1,
                     COMPAT_RO_VERITY = 1ULL << 2, COMPAT_RO_BLOCK_GROUP_TREE = 1ULL << 3;
// incompat bits.
inline constexpr u64 INCOMPAT_MIXED_BACKREF = 1ULL << 0, INCOMPAT_DEFAULT_SUBVOL = 1ULL << 1,
                     INCOMPAT_MIXED_GROUPS = 1ULL << 2, INCOMPAT_COMPRESS_LZO = 1ULL << 3,
                     INCOMPAT_COMPRESS_ZSTD = 1ULL << 4, INCOMPAT_BIG_METADATA = 1ULL << 5,
                     INCOMPAT_EXTENDED_IREF = 1ULL << 6, INCOMPAT_RAID56 = 1ULL << 7,
                     INCOMPAT_SKINNY_METADATA = 1ULL << 8, INCOMPAT_NO_HOLES = 1ULL << 9,
                     INCOMPAT_METADATA_UUID = 1ULL << 10, INCOMPAT_RAID1C34 = 1ULL << 11,
                     INCOMPAT_ZONED = 1ULL << 12, INCOMPAT_EXTENT_TREE_V2 = 1ULL << 13,
                     INCOMPAT_RAID_STRIPE_TREE = 1ULL << 14, INCOMPAT_SIMPLE_QUOTA = 1ULL << 16,
                     INCOMPAT_REMAP_TREE = 1ULL << 17;
// Which bits fsctl reads and writes: lib/format/feature_flags.h.
// Superblock flags.
inline constexpr u64 SUPER_FLAG_ERROR = 1ULL << 2, SUPER_FLAG_SEEDING = 1ULL << 32,
                     SUPER_FLAG_METADUMP = 1ULL << 33, SUPER_FLAG_METADUMP_V2 = 1ULL << 34,
                     SUPER_FLAG_CHANGING_FSID = 1ULL << 35, SUPER_FLAG_CHANGING_FSID_V2 = 1ULL << 36,
                     SUPER_FLAG_CHANGING_BG_TREE = 1ULL << 38, SUPER_FLAG_CHANGING_DATA_CSUM = 1ULL << 39,
                     SUPER_FLAG_CHANGING_META_CSUM = 1ULL << 40;

/// struct btrfs_dev_item (98 bytes).
struct DevItem {
  le64 devid;
  le64 total_bytes;
  le64 bytes_used;
  le32 io_align;
  le32 io_width;
  le32 sector_size;
  le64 type;
  le64 generation;
  le64 start_offset;
  le32 dev_group;
  u8 seek_speed;
  u8 bandwidth;
  u8 uuid[UUID_SIZE];
  u8 fsid[FSID_SIZE];
};
static_assert(sizeof(DevItem) == 98);
static_assert(offsetof(DevItem, uuid) == 66);

/// struct btrfs_root_backup (168 bytes).
struct RootBackup {
  le64 tree_root, tree_root_gen;
  le64 chunk_root, chunk_root_gen;
  le64 extent_root, extent_root_gen;
  le64 fs_root, fs_root_gen;
  le64 dev_root, dev_root_gen;
  le64 csum_root, csum_root_gen;
  le64 total_bytes;
  le64 bytes_used;
  le64 num_devices;
  le64 unused_64[4];
  u8 tree_root_level, chunk_root_level, extent_root_level, fs_root_level, dev_root_level, csum_root_level;
  u8 unused_8[10];
};
static_assert(sizeof(RootBackup) == 168);

/// struct btrfs_super_block (4096 bytes).
struct SuperBlock {
  u8 csum[CSUM_SIZE_MAX];
  u8 fsid[FSID_SIZE];
  le64 bytenr;
  le64 flags;
  le64 magic;
  le64 generation;
  le64 root;
  le64 chunk_root;
  le64 log_root;
  le64 unused_log_root_transid;
  le64 total_bytes;
  le64 bytes_used;
  le64 root_dir_objectid;
  le64 num_devices;
  le32 sectorsize;
  le32 nodesize;
  le32 unused_leafsize;
  le32 stripesize;
  le32 sys_chunk_array_size;
  le64 chunk_root_generation;
  le64 compat_flags;
  le64 compat_ro_flags;
  le64 incompat_flags;
  le16 csum_type;
  u8 root_level;
  u8 chunk_root_level;
  u8 log_root_level;
  DevItem dev_item;
  char label[LABEL_SIZE];
  le64 cache_generation;
  le64 uuid_tree_generation;
  u8 metadata_uuid[FSID_SIZE];
  le64 nr_global_roots;
  u8 reserved[216];
  u8 sys_chunk_array[SYSTEM_CHUNK_ARRAY_SIZE];
  RootBackup super_roots[NUM_BACKUP_ROOTS];
  u8 padding[565];
};
static_assert(sizeof(SuperBlock) == SUPER_INFO_SIZE);
static_assert(offsetof(SuperBlock, magic) == 64 && offsetof(SuperBlock, csum_type) == 196);
static_assert(offsetof(SuperBlock, dev_item) == 201 && offsetof(SuperBlock, label) == 299);
static_assert(offsetof(SuperBlock, metadata_uuid) == 571 && offsetof(SuperBlock, sys_chunk_array) == 811);
static_assert(offsetof(SuperBlock, super_roots) == 2859);

/// The 4096 bytes of `sb` as a byte view, to read a superblock copy from a
/// device into (read_at(physical, super_bytes(sb))) or to checksum and write
/// one. The struct has alignment 1 and no padding, so the view is its bytes.
[[nodiscard]] std::span<u8, SUPER_INFO_SIZE> super_bytes(SuperBlock& sb);
[[nodiscard]] std::span<const u8, SUPER_INFO_SIZE> super_bytes(const SuperBlock& sb);

/// The label of `sb`: the bytes of `label` up to the first NUL (at most 256).
[[nodiscard]] std::span<const u8> super_label(const SuperBlock& sb);

/// The fsid that tree block headers carry: metadata_uuid with the
/// METADATA_UUID incompat bit, else fsid (kernel btrfs_check_super).
[[nodiscard]] std::span<const u8, FSID_SIZE> header_fsid(const SuperBlock& sb);

/// Validates one superblock copy read from physical `expected_bytenr`: magic,
/// csum type, checksum over bytes [32, 4096), bytenr, sizes (sectorsize
/// 4K..64K power of two, nodesize sectorsize..64K power of two), root levels,
/// sys_chunk_array_size. Errors: Errc::corrupt (not btrfs / bad field),
/// Errc::csum (checksum mismatch, "has X expect Y"), Errc::unsupported
/// (unknown csum type).
[[nodiscard]] Status validate_super(const SuperBlock& sb, u64 expected_bytenr);

/// Lower-case canonical text of a 16-byte uuid ("8-4-4-4-12").
[[nodiscard]] std::string uuid_to_string(std::span<const u8> uuid);

}  // namespace fsctl::format
