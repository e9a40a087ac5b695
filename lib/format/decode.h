// SPDX-License-Identifier: GPL-2.0-only
// Decoders from item bytes into plain cpu structs, for the variable-length and
// commonly used items (chunk + stripes, extent item + inline refs, root item
// v1/v2, sys_chunk_array). Bounds-checked: overruns are Errc::corrupt.
#pragma once
#include <array>
#include <span>
#include <vector>

#include "lib/base/result.h"
#include "lib/format/items.h"
#include "lib/format/key.h"

namespace fsctl::format {

/// One stripe of a chunk: which device, where on it (physical byte offset).
struct ChunkStripe {
  u64 devid = 0;
  u64 physical = 0;
  std::array<u8, UUID_SIZE> dev_uuid{};
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

/// One inline or keyed extent backref in cpu form.
struct ExtentRef {
  u8 type = 0;         // TREE_BLOCK_REF, SHARED_BLOCK_REF, EXTENT_DATA_REF, SHARED_DATA_REF, EXTENT_OWNER_REF
  u64 root = 0;        // TREE_BLOCK_REF / EXTENT_DATA_REF / EXTENT_OWNER_REF
  u64 parent = 0;      // SHARED_* (bytenr of the parent tree block)
  u64 objectid = 0;    // EXTENT_DATA_REF: inode number
  u64 offset = 0;      // EXTENT_DATA_REF: file offset minus extent offset
  u32 count = 1;       // data refs
};

/// An EXTENT_ITEM / METADATA_ITEM with its inline refs.
struct ExtentRecord {
  u64 refs = 0, generation = 0, flags = 0;
  bool has_tree_block_info = false;  // non-skinny tree block
  Key tree_block_key{};              // from btrfs_tree_block_info
  u8 level = 0;                      // tree block level (info or METADATA_ITEM key offset)
  std::vector<ExtentRef> inline_refs;
};

/// Decodes an extent item body. `key` tells skinny (METADATA_ITEM, level in
/// key.offset) from EXTENT_ITEM. Errors: Errc::corrupt (overrun, unknown
/// inline ref type), Errc::unsupported (v0 extent item of 8 bytes).
[[nodiscard]] Result<ExtentRecord> decode_extent_item(const Key& key, std::span<const u8> data);

/// Root item in cpu form (the fields fsctl uses).
struct RootInfo {
  u64 generation = 0, root_dirid = 0, bytenr = 0, bytes_used = 0, last_snapshot = 0, flags = 0;
  u32 refs = 0;
  Key drop_progress{};
  u8 drop_level = 0, level = 0;
  u64 generation_v2 = 0;
  std::array<u8, UUID_SIZE> uuid{}, parent_uuid{}, received_uuid{};
  u64 ctransid = 0, otransid = 0, stransid = 0, rtransid = 0;
  bool v2 = false;  // item is the full 439-byte form
};

/// Decodes a ROOT_ITEM (legacy 239 bytes or full 439). Errors: Errc::corrupt.
[[nodiscard]] Result<RootInfo> decode_root_item(std::span<const u8> data);

/// hash_extent_data_ref(root, objectid, offset): the key offset of a keyed
/// EXTENT_DATA_REF (kernel extent-tree.c).
[[nodiscard]] u64 hash_extent_data_ref(u64 root, u64 objectid, u64 offset);

}  // namespace fsctl::format
