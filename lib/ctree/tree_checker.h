// SPDX-License-Identifier: GPL-2.0-only
// Validation of a tree block before any view is handed out (kernel
// tree-checker.c and disk-io.c btrfs_validate_extent_buffer): checksum,
// header identity, parent expectations, then layout of items or key pointers.
#pragma once
#include <span>

#include "lib/base/result.h"
#include "lib/ctree/block_source.h"
#include "lib/format/node_layout.h"

namespace fsctl::ctree {

/// Identity every tree block of the filesystem must carry.
struct BlockIdentity {
  u32 nodesize = 0;
  u16 csum_type = 0;
  std::array<u8, format::FSID_SIZE> fsid{};            // metadata fsid
  std::array<u8, format::UUID_SIZE> chunk_tree_uuid{};
  bool check_chunk_tree_uuid = true;  // false only while reading the chunk root itself
};

/// Verifies `block` (nodesize bytes read from logical `bytenr`): checksum,
/// header bytenr, fsid, chunk tree uuid, level < 8, `check`, and the layout
/// (check_node_layout). Errors: Errc::csum or Errc::corrupt with a message in
/// "has X expect Y" form; the caller adds the device and bytenr.
[[nodiscard]] Status verify_tree_block(std::span<const u8> block, u64 bytenr, const BlockIdentity& id,
                                       const ParentCheck& check);

/// Parent expectations only (level, generation, owner, first key) of a block
/// already verified by verify_tree_block, e.g. one found in the cache.
/// Errors: Errc::corrupt.
[[nodiscard]] Status check_parent(const format::NodeView& v, const ParentCheck& check);

/// Layout only: nritems fits, leaf items lie inside the block and are packed
/// back to front without overlap, keys strictly ascending; node key pointers
/// fit and are non-empty with non-zero blockptrs. Errors: Errc::corrupt.
[[nodiscard]] Status check_node_layout(std::span<const u8> block, u32 nodesize);

}  // namespace fsctl::ctree
