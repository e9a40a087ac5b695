// SPDX-License-Identifier: GPL-2.0-only
// Tables of the superblock flag words' bits (feature_flags.h). Names and bit
// numbers: kernel btrfs_tree.h / uapi btrfs.h, ../shared/FORMAT.md 3.11.
#include "lib/format/feature_flags.h"

#include <cstdio>

#include "lib/format/node_layout.h"
#include "lib/format/super.h"

namespace fsctl::format {
namespace {

// Superblock `flags`. Bits 0 and 1 are the tree block header's WRITTEN and
// RELOC bits, which the kernel and progs also accept in the superblock
// (write_all_supers ORs WRITTEN in; BTRFS_SUPER_FLAG_SUPP lists both).
constexpr FlagBit SUPER_FLAGS[] = {
    {HEADER_FLAG_WRITTEN, "WRITTEN", true, {}},
    {HEADER_FLAG_RELOC, "RELOC", true, {}},
    {SUPER_FLAG_ERROR, "ERROR", true, "a filesystem with the ERROR flag (the kernel recorded an error): run btrfs check first"},
    {SUPER_FLAG_SEEDING, "SEEDING", true,
     "a seed device (SEEDING flag): sprout filesystems built on it read its trees in place and break on any change "
     "to it; the kernel mounts a seed read-only"},
    {SUPER_FLAG_METADUMP, "METADUMP", true,
     "an image restored by btrfs-image (METADUMP flag): metadata only, the file data is not present"},
    {SUPER_FLAG_METADUMP_V2, "METADUMP_V2", true,
     "an image restored by btrfs-image (METADUMP_V2 flag): metadata only, the file data is not present"},
    {SUPER_FLAG_CHANGING_FSID, "CHANGING_FSID", true,
     "a filesystem with an interrupted fsid change (CHANGING_FSID): finish it first (btrfstune -u/-U)"},
    {SUPER_FLAG_CHANGING_FSID_V2, "CHANGING_FSID_V2", true,
     "a filesystem with an interrupted metadata_uuid change (CHANGING_FSID_V2): finish it first (btrfstune -m/-M)"},
    // Convert resumes and finishes its own half state; every other write
    // command refuses it (Transaction::start, allow_changing_bg_tree).
    {SUPER_FLAG_CHANGING_BG_TREE, "CHANGING_BG_TREE", true, {}},
    {SUPER_FLAG_CHANGING_DATA_CSUM, "CHANGING_DATA_CSUM", true,
     "a filesystem with an interrupted checksum change (CHANGING_DATA_CSUM): finish it first (btrfstune --csum)"},
    {SUPER_FLAG_CHANGING_META_CSUM, "CHANGING_META_CSUM", true,
     "a filesystem with an interrupted checksum change (CHANGING_META_CSUM): finish it first (btrfstune --csum)"},
};

constexpr FlagBit COMPAT_RO[] = {
    {COMPAT_RO_FREE_SPACE_TREE, "FREE_SPACE_TREE", true, {}},
    {COMPAT_RO_FREE_SPACE_TREE_VALID, "FREE_SPACE_TREE_VALID", true, {}},
    {COMPAT_RO_VERITY, "VERITY", true, {}},
    {COMPAT_RO_BLOCK_GROUP_TREE, "BLOCK_GROUP_TREE", true, {}},
};

constexpr FlagBit INCOMPAT[] = {
    {INCOMPAT_MIXED_BACKREF, "MIXED_BACKREF", true, {}},
    {INCOMPAT_DEFAULT_SUBVOL, "DEFAULT_SUBVOL", true, {}},
    {INCOMPAT_MIXED_GROUPS, "MIXED_GROUPS", true, {}},
    {INCOMPAT_COMPRESS_LZO, "COMPRESS_LZO", true, {}},
    {INCOMPAT_COMPRESS_ZSTD, "COMPRESS_ZSTD", true, {}},
    {INCOMPAT_BIG_METADATA, "BIG_METADATA", true, {}},
    {INCOMPAT_EXTENDED_IREF, "EXTENDED_IREF", true, {}},
    {INCOMPAT_RAID56, "RAID56", true, {}},
    {INCOMPAT_SKINNY_METADATA, "SKINNY_METADATA", true, {}},
    {INCOMPAT_NO_HOLES, "NO_HOLES", true, {}},
    {INCOMPAT_METADATA_UUID, "METADATA_UUID", true, {}},
    {INCOMPAT_RAID1C34, "RAID1C34", true, {}},
    {INCOMPAT_ZONED, "ZONED", false,
     "a zoned filesystem (ZONED): zones are written sequentially only, which fsctl's allocator does not do"},
    {INCOMPAT_EXTENT_TREE_V2, "EXTENT_TREE_V2", false, "a filesystem with extent tree v2 (EXTENT_TREE_V2), an extent tree format fsctl does not write"},
    {INCOMPAT_RAID_STRIPE_TREE, "RAID_STRIPE_TREE", false,
     "a filesystem with a RAID stripe tree (RAID_STRIPE_TREE), which fsctl does not update"},
    {INCOMPAT_SIMPLE_QUOTA, "SIMPLE_QUOTA", true, {}},
    {INCOMPAT_REMAP_TREE, "REMAP_TREE", false,
     "a filesystem with a remap tree (REMAP_TREE), which fsctl does not update"},
};

}  // namespace

std::span<const FlagBit> super_flag_bits() { return SUPER_FLAGS; }
std::span<const FlagBit> compat_ro_bits() { return COMPAT_RO; }
std::span<const FlagBit> incompat_bits() { return INCOMPAT; }

u64 unknown_bits(u64 value, std::span<const FlagBit> table) {
  for (auto& f : table) value &= ~f.bit;
  return value;
}

u64 unreadable_bits(u64 value, std::span<const FlagBit> table) {
  u64 out = unknown_bits(value, table);
  for (auto& f : table)
    if (!f.readable) out |= value & f.bit;
  return out;
}

std::string hex(u64 v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::string flag_names(u64 value, std::span<const FlagBit> table) {
  std::string s;
  for (auto& f : table) {
    if (!(value & f.bit)) continue;
    if (!s.empty()) s += " | ";
    s += f.name;
  }
  if (u64 rest = unknown_bits(value, table)) {
    if (!s.empty()) s += " | ";
    s += "unknown " + hex(rest);
  }
  return s;
}

}  // namespace fsctl::format
