// SPDX-License-Identifier: GPL-2.0-only
// DEV_EXTENT codec (kernel btrfs_tree.h struct btrfs_dev_extent).
#include "lib/format/dev_extent.h"

#include <cstring>

#include "lib/format/item_bytes.h"
#include "lib/format/items.h"

namespace fsctl::format {

Result<DevExtentRecord> decode_dev_extent(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(DevExtent), "DEV_EXTENT"));
  auto d = detail::load_struct<DevExtent>(data);
  DevExtentRecord r;
  r.chunk_tree = d.chunk_tree.get();
  r.chunk_objectid = d.chunk_objectid.get();
  r.chunk_offset = d.chunk_offset.get();
  r.length = d.length.get();
  std::memcpy(r.chunk_tree_uuid.data(), d.chunk_tree_uuid, UUID_SIZE);
  return r;
}

std::vector<u8> encode_dev_extent(const DevExtentRecord& r) {
  DevExtent d{};
  d.chunk_tree.set(r.chunk_tree);
  d.chunk_objectid.set(r.chunk_objectid);
  d.chunk_offset.set(r.chunk_offset);
  d.length.set(r.length);
  std::memcpy(d.chunk_tree_uuid, r.chunk_tree_uuid.data(), UUID_SIZE);
  return detail::struct_bytes(d);
}

}  // namespace fsctl::format
