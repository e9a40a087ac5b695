// SPDX-License-Identifier: GPL-2.0-only
// CHUNK_ITEM codec: struct btrfs_chunk with its btrfs_stripe array (kernel
// btrfs_tree.h; key (FIRST_CHUNK_TREE_OBJECTID, CHUNK_ITEM, logical) in the
// chunk tree) and the superblock's sys_chunk_array, a packed sequence of
// (btrfs_disk_key, btrfs_chunk) for the SYSTEM chunks.
#pragma once
#include <array>
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/key.h"
#include "lib/format/node_layout.h"
#include "lib/format/super.h"

namespace fsctl::format {

// Block group / chunk type bits (BTRFS_BLOCK_GROUP_*).
inline constexpr u64 BLOCK_GROUP_DATA = 1ULL << 0, BLOCK_GROUP_SYSTEM = 1ULL << 1, BLOCK_GROUP_METADATA = 1ULL << 2,
                     BLOCK_GROUP_RAID0 = 1ULL << 3, BLOCK_GROUP_RAID1 = 1ULL << 4, BLOCK_GROUP_DUP = 1ULL << 5,
                     BLOCK_GROUP_RAID10 = 1ULL << 6, BLOCK_GROUP_RAID5 = 1ULL << 7, BLOCK_GROUP_RAID6 = 1ULL << 8,
                     BLOCK_GROUP_RAID1C3 = 1ULL << 9, BLOCK_GROUP_RAID1C4 = 1ULL << 10;
inline constexpr u64 BLOCK_GROUP_TYPE_MASK = BLOCK_GROUP_DATA | BLOCK_GROUP_SYSTEM | BLOCK_GROUP_METADATA;
inline constexpr u64 BLOCK_GROUP_PROFILE_MASK = BLOCK_GROUP_RAID0 | BLOCK_GROUP_RAID1 | BLOCK_GROUP_DUP |
                                                BLOCK_GROUP_RAID10 | BLOCK_GROUP_RAID5 | BLOCK_GROUP_RAID6 |
                                                BLOCK_GROUP_RAID1C3 | BLOCK_GROUP_RAID1C4;
inline constexpr u64 STRIPE_LEN = 64 * 1024;  // BTRFS_STRIPE_LEN

/// One stripe of a chunk: which device, where on it (physical byte offset).
struct ChunkStripe {
  u64 devid = 0;
  u64 physical = 0;
  std::array<u8, UUID_SIZE> dev_uuid{};
  bool operator==(const ChunkStripe&) const = default;
};

/// A CHUNK_ITEM in cpu form (kernel struct btrfs_chunk). `logical` is the key offset.
struct Chunk {
  u64 logical = 0;
  u64 length = 0;
  u64 owner = 0;
  u64 stripe_len = 0;
  u64 type = 0;  // BLOCK_GROUP_* bits
  u32 io_align = 0, io_width = 0, sector_size = 0;
  u16 num_stripes = 0, sub_stripes = 0;
  std::vector<ChunkStripe> stripes;
  bool operator==(const Chunk&) const = default;
};

/// Decodes a btrfs_chunk with its stripes from `data` (exactly its size or
/// longer when `consumed` is given, e.g. inside sys_chunk_array). Validates
/// num_stripes > 0, stripe_len power of two, length > 0, and the profile/stripe
/// count rules of the kernel's btrfs_check_chunk_valid. Errors: Errc::corrupt.
[[nodiscard]] Result<Chunk> decode_chunk(u64 logical, std::span<const u8> data, std::size_t* consumed = nullptr);

/// Encodes `chunk` as a CHUNK_ITEM body (struct btrfs_chunk followed by its
/// stripes; 48 + 32 * stripes bytes), the inverse of decode_chunk; the same
/// bytes follow the key in sys_chunk_array. REQUIRES: chunk.stripes.size()
/// == chunk.num_stripes.
[[nodiscard]] std::vector<u8> encode_chunk(const Chunk& chunk);

/// Decodes the superblock's sys_chunk_array (`size` valid bytes): a packed
/// sequence of (disk key, chunk). Every key must be (256, CHUNK_ITEM, logical).
/// Errors: Errc::corrupt naming the byte offset inside the array.
[[nodiscard]] Result<std::vector<Chunk>> decode_sys_chunk_array(std::span<const u8> array, u32 size);

/// One sys_chunk_array entry of `chunk`: the disk key (FIRST_CHUNK_TREE_OBJECTID,
/// CHUNK_ITEM, chunk.logical) followed by encode_chunk(chunk) (kernel
/// btrfs_add_system_chunk). REQUIRES: as encode_chunk.
[[nodiscard]] std::vector<u8> encode_sys_chunk_entry(const Chunk& chunk);

/// Bytes of a sys_chunk_array entry with `num_stripes` stripes: 17 + 48 + 32 * num_stripes.
[[nodiscard]] std::size_t sys_chunk_entry_size(std::size_t num_stripes);

/// Replaces the sys_chunk_array of `sb` with `entries` (packed entries as
/// encode_sys_chunk_entry makes them, or kept from the old array), the rest
/// of the 2048-byte array zero, and sets sys_chunk_array_size to their size
/// (kernel btrfs_add_system_chunk / btrfs_del_sys_chunk). Errors:
/// Errc::nospc when `entries` exceed SYSTEM_CHUNK_ARRAY_SIZE (the kernel
/// fails with EFBIG), `sb` unchanged.
[[nodiscard]] Status store_sys_chunk_array(SuperBlock& sb, std::span<const u8> entries);

}  // namespace fsctl::format
