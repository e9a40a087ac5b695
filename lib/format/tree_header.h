// SPDX-License-Identifier: GPL-2.0-only
// Tree block header fields in cpu form (kernel btrfs_tree.h struct
// btrfs_header), for code that builds or copies blocks: a new block's header
// (kernel btrfs_alloc_tree_block / btrfs_init_new_buffer), the bytenr of a
// relocated copy. Reading headers of verified blocks: NodeView (node_layout.h).
#pragma once
#include <array>
#include <span>

#include "lib/base/ints.h"
#include "lib/format/node_layout.h"

namespace fsctl::format {

/// Header flags of a block written by a current kernel: WRITTEN and backref
/// revision MIXED_BACKREF_REV in bits 56..63 (kernel btrfs_init_new_buffer).
inline constexpr u64 NEW_BLOCK_HEADER_FLAGS = HEADER_FLAG_WRITTEN | (MIXED_BACKREF_REV << BACKREF_REV_SHIFT);

/// Every header field but the checksum.
struct TreeBlockHeader {
  std::array<u8, FSID_SIZE> fsid{};  // metadata fsid (header_fsid of the superblock)
  u64 bytenr = 0;                    // logical address of the block
  u64 flags = 0;                     // HEADER_FLAG_* and the backref revision
  std::array<u8, UUID_SIZE> chunk_tree_uuid{};
  u64 generation = 0;  // transid that wrote the block
  u64 owner = 0;       // tree objectid
  u32 nritems = 0;
  u8 level = 0;
  bool operator==(const TreeBlockHeader&) const = default;
};

/// The header fields of `block`. REQUIRES: block.size() >= sizeof(Header)
/// (a block in memory is nodesize bytes).
[[nodiscard]] TreeBlockHeader load_header(std::span<const u8> block);

/// Writes every field of `h` into the header of `block`; the checksum bytes
/// and the rest of the block stay. REQUIRES: block.size() >= sizeof(Header).
void store_header(std::span<u8> block, const TreeBlockHeader& h);

/// Sets the header bytenr of `block` (a copy placed at `bytenr`).
/// REQUIRES: block.size() >= sizeof(Header).
void set_header_bytenr(std::span<u8> block, u64 bytenr);

}  // namespace fsctl::format
