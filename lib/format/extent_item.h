// SPDX-License-Identifier: GPL-2.0-only
// EXTENT_ITEM / METADATA_ITEM codec with inline backrefs (kernel btrfs_tree.h
// struct btrfs_extent_item, btrfs_tree_block_info, btrfs_extent_inline_ref,
// btrfs_extent_data_ref, btrfs_shared_data_ref; EXTENT_OWNER_REF of simple
// quotas), both forms of a tree block's item: skinny (METADATA_ITEM, level in
// the key) and the old one (EXTENT_ITEM followed by btrfs_tree_block_info).
// Keyed backrefs: extent_backref.h.
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/key.h"

namespace fsctl::format {

// Extent item flags (BTRFS_EXTENT_FLAG_*, BTRFS_BLOCK_FLAG_FULL_BACKREF).
inline constexpr u64 EXTENT_FLAG_DATA = 1ULL << 0, EXTENT_FLAG_TREE_BLOCK = 1ULL << 1,
                     BLOCK_FLAG_FULL_BACKREF = 1ULL << 8;

/// One inline or keyed extent backref in cpu form.
struct ExtentRef {
  u8 type = 0;         // TREE_BLOCK_REF, SHARED_BLOCK_REF, EXTENT_DATA_REF, SHARED_DATA_REF, EXTENT_OWNER_REF
  u64 root = 0;        // TREE_BLOCK_REF / EXTENT_DATA_REF / EXTENT_OWNER_REF
  u64 parent = 0;      // SHARED_* (bytenr of the parent tree block)
  u64 objectid = 0;    // EXTENT_DATA_REF: inode number
  u64 offset = 0;      // EXTENT_DATA_REF: file offset minus extent offset
  u32 count = 1;       // data refs
  bool operator==(const ExtentRef&) const = default;
};

/// An EXTENT_ITEM / METADATA_ITEM with its inline refs.
struct ExtentRecord {
  u64 refs = 0, generation = 0, flags = 0;  // flags: EXTENT_FLAG_DATA, EXTENT_FLAG_TREE_BLOCK, BLOCK_FLAG_FULL_BACKREF
  bool has_tree_block_info = false;  // non-skinny tree block: btrfs_tree_block_info follows the 24-byte header
  Key tree_block_key{};              // from btrfs_tree_block_info: the block's first key
  u8 level = 0;                      // tree block level (info or METADATA_ITEM key offset)
  std::vector<ExtentRef> inline_refs;
  bool operator==(const ExtentRecord&) const = default;
};

/// Decodes an extent item body. `key` tells skinny (METADATA_ITEM, level in
/// key.offset) from EXTENT_ITEM (a tree block's carries btrfs_tree_block_info).
/// Errors: Errc::corrupt (an inline ref or the info overruns the item, unknown
/// inline ref type), Errc::unsupported (v0 extent item shorter than 24 bytes).
[[nodiscard]] Result<ExtentRecord> decode_extent_item(const Key& key, std::span<const u8> data);

/// Bytes of an extent item: btrfs_extent_item (refs, generation, flags),
/// btrfs_tree_block_info {tree_block_key, level} when `rec.has_tree_block_info`,
/// then each inline ref (type byte + its body) in the given order. The
/// inverse of decode_extent_item.
[[nodiscard]] std::vector<u8> encode_extent_item(const ExtentRecord& rec);

/// Rewrites the extent item `data` (in a leaf being changed) as `rec`, whose
/// encoding must have the item's size (e.g. inline refs re-sorted or a
/// parent remapped). Errors: Errc::corrupt "extent item of N bytes, the
/// record needs M" when the sizes differ; nothing written.
[[nodiscard]] Status store_extent_item(std::span<u8> data, const ExtentRecord& rec);

/// The key of a tree block's extent item: (bytenr, METADATA_ITEM, level) with
/// the SKINNY_METADATA incompat bit, else (bytenr, EXTENT_ITEM, nodesize).
[[nodiscard]] Key tree_block_extent_key(u64 bytenr, u8 level, u32 nodesize, bool skinny);

/// Bytes of the extent item new_tree_block_extent builds with one inline
/// TREE_BLOCK_REF or SHARED_BLOCK_REF (item header not included): 33
/// skinny (btrfs_extent_item 24 + ref 9), 51 in the old form (+
/// btrfs_tree_block_info 18: the first key 17 and the level). The key in the
/// leaf's item header is 17 bytes in both forms.
[[nodiscard]] u32 tree_block_extent_item_size(bool skinny);

/// The extent item of a tree block just allocated with one reference
/// (kernel extent-tree.c alloc_reserved_tree_block): refs 1, `generation`,
/// flags TREE_BLOCK, and one inline TREE_BLOCK_REF of `root`; with a
/// `parent` (!= 0) FULL_BACKREF and a SHARED_BLOCK_REF of it instead.
/// Without skinny metadata the item also carries btrfs_tree_block_info with
/// the block's `first_key` (zero for an empty block) and `level`.
[[nodiscard]] ExtentRecord new_tree_block_extent(u64 generation, u8 level, u64 root, bool skinny,
                                                 const Key& first_key = {}, u64 parent = 0);

/// The order key of an inline ref inside its extent item: refs are sorted by
/// type ascending, then by this value DESCENDING (kernel
/// lookup_inline_extent_backref stops at the first ref of the same type with
/// a smaller value; the tree checker rejects "inline ref out-of-order" when a
/// ref's value exceeds the previous one of its type): the root for
/// TREE_BLOCK_REF and EXTENT_OWNER_REF, the parent bytenr for SHARED_*, and
/// hash_extent_data_ref(root, objectid, offset) for EXTENT_DATA_REF.
[[nodiscard]] u64 inline_ref_seq(const ExtentRef& ref);

/// Sorts inline refs into the on-disk order: type ascending, inline_ref_seq
/// descending (stable for equal keys).
void sort_inline_refs(std::vector<ExtentRef>& refs);

/// The subvolume a data extent is charged to under simple quotas: the root
/// of its EXTENT_OWNER_REF inline ref, which the kernel writes first (type
/// 172 sorts before every other ref; extent-tree.c btrfs_get_extent_owner_root
/// reads only the first). std::nullopt when the first inline ref is another
/// type (an extent written before simple quotas were enabled).
[[nodiscard]] std::optional<u64> extent_owner_root(const ExtentRecord& rec);

/// hash_extent_data_ref(root, objectid, offset): the key offset of a keyed
/// EXTENT_DATA_REF (kernel extent-tree.c).
[[nodiscard]] u64 hash_extent_data_ref(u64 root, u64 objectid, u64 offset);

}  // namespace fsctl::format
