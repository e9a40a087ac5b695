// SPDX-License-Identifier: GPL-2.0-only
// ROOT_ITEM codec: struct btrfs_root_item (kernel btrfs_tree.h; key (tree id,
// ROOT_ITEM, offset) in the root tree), the legacy 239-byte form (up to
// `level`) and the full 439-byte one (generation_v2, uuids, transids, times).
// Edits in place keep every byte a caller does not change.
#pragma once
#include <array>
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/key.h"
#include "lib/format/node_layout.h"

namespace fsctl::format {

/// Bytes of a ROOT_ITEM in the full form fsctl writes (the legacy form ends
/// at 239, ROOT_ITEM_V1_SIZE in items.h). For sizing leaves.
inline constexpr u32 ROOT_ITEM_SIZE = 439;

/// Root item in cpu form (the fields fsctl uses; the embedded inode item,
/// byte_limit and the times are not carried).
struct RootInfo {
  u64 generation = 0, root_dirid = 0, bytenr = 0, bytes_used = 0, last_snapshot = 0, flags = 0;
  u32 refs = 0;          // 0: the subvolume is deleted and being dropped
  Key drop_progress{};   // where an interrupted drop resumes
  u8 drop_level = 0, level = 0;
  u64 generation_v2 = 0;
  std::array<u8, UUID_SIZE> uuid{}, parent_uuid{}, received_uuid{};
  u64 ctransid = 0, otransid = 0, stransid = 0, rtransid = 0;
  bool v2 = false;  // item is the full 439-byte form
  bool operator==(const RootInfo&) const = default;
};

/// Decodes a ROOT_ITEM (legacy 239 bytes or full 439). Errors: Errc::corrupt
/// "root item of N bytes, expect at least 239", or a level of 8 or more.
[[nodiscard]] Result<RootInfo> decode_root_item(std::span<const u8> data);

/// The bytes of a new root item from `r`: 439 bytes when r.v2, else 239; the
/// fields RootInfo does not carry are zero (as for a tree fsctl creates).
[[nodiscard]] std::vector<u8> encode_root_item(const RootInfo& r);

/// Writes every field of `r` into the item `data` in place (in a leaf being
/// changed): the v2 fields only when the item is the full form; the inode
/// item, byte_limit and the times are left as they are. The usual edit is
/// decode_root_item, change bytenr/level/generation (or drop_progress,
/// last_snapshot), store_root_item. Errors: Errc::corrupt when the item is
/// shorter than 239 bytes, or r.v2 and it is shorter than 439; nothing written.
[[nodiscard]] Status store_root_item(std::span<u8> data, const RootInfo& r);

}  // namespace fsctl::format
