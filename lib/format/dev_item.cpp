// SPDX-License-Identifier: GPL-2.0-only
// DEV_ITEM codec (kernel btrfs_tree.h struct btrfs_dev_item).
#include "lib/format/dev_item.h"

#include <cstring>

#include "lib/format/item_bytes.h"

namespace fsctl::format {

DevItem dev_item_to_disk(const DevItemRecord& d) {
  DevItem di{};
  di.devid.set(d.devid);
  di.total_bytes.set(d.total_bytes);
  di.bytes_used.set(d.bytes_used);
  di.io_align.set(d.io_align);
  di.io_width.set(d.io_width);
  di.sector_size.set(d.sector_size);
  di.type.set(d.type);
  di.generation.set(d.generation);
  di.start_offset.set(d.start_offset);
  di.dev_group.set(d.dev_group);
  di.seek_speed = d.seek_speed;
  di.bandwidth = d.bandwidth;
  std::memcpy(di.uuid, d.uuid.data(), UUID_SIZE);
  std::memcpy(di.fsid, d.fsid.data(), FSID_SIZE);
  return di;
}

DevItemRecord dev_item_from_disk(const DevItem& di) {
  DevItemRecord d;
  d.devid = di.devid.get();
  d.total_bytes = di.total_bytes.get();
  d.bytes_used = di.bytes_used.get();
  d.io_align = di.io_align.get();
  d.io_width = di.io_width.get();
  d.sector_size = di.sector_size.get();
  d.type = di.type.get();
  d.generation = di.generation.get();
  d.start_offset = di.start_offset.get();
  d.dev_group = di.dev_group.get();
  d.seek_speed = di.seek_speed;
  d.bandwidth = di.bandwidth;
  std::memcpy(d.uuid.data(), di.uuid, UUID_SIZE);
  std::memcpy(d.fsid.data(), di.fsid, FSID_SIZE);
  return d;
}

Result<DevItemRecord> decode_dev_item(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(DevItem), "DEV_ITEM"));
  return dev_item_from_disk(detail::load_struct<DevItem>(data));
}

std::vector<u8> encode_dev_item(const DevItemRecord& d) { return detail::struct_bytes(dev_item_to_disk(d)); }

Status store_dev_item(std::span<u8> data, const DevItemRecord& d) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(DevItem), "DEV_ITEM"));
  detail::store_struct(data, dev_item_to_disk(d));
  return {};
}

}  // namespace fsctl::format
