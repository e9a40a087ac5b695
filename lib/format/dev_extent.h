// SPDX-License-Identifier: GPL-2.0-only
// DEV_EXTENT codec: struct btrfs_dev_extent (kernel btrfs_tree.h; key (devid,
// DEV_EXTENT, physical) in the dev tree: which chunk a device range belongs to).
#pragma once
#include <array>
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/node_layout.h"

namespace fsctl::format {

/// A DEV_EXTENT in cpu form.
struct DevExtentRecord {
  u64 chunk_tree = 0;      // CHUNK_TREE_OBJECTID
  u64 chunk_objectid = 0;  // FIRST_CHUNK_TREE_OBJECTID
  u64 chunk_offset = 0;    // logical start of the chunk
  u64 length = 0;          // bytes of the device range (one stripe)
  std::array<u8, UUID_SIZE> chunk_tree_uuid{};
  bool operator==(const DevExtentRecord&) const = default;
};

/// Decodes a DEV_EXTENT body. Errors: Errc::corrupt "DEV_EXTENT of N bytes,
/// expect at least 48".
[[nodiscard]] Result<DevExtentRecord> decode_dev_extent(std::span<const u8> data);
/// The 48 bytes of `d` (kernel insert_dev_extent).
[[nodiscard]] std::vector<u8> encode_dev_extent(const DevExtentRecord& d);

}  // namespace fsctl::format
