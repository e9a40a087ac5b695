// SPDX-License-Identifier: GPL-2.0-only
// DEV_ITEM codec: struct btrfs_dev_item (kernel btrfs_tree.h; key
// (DEV_ITEMS_OBJECTID, DEV_ITEM, devid) in the chunk tree, and embedded in
// every device's superblock) to and from its cpu form.
#pragma once
#include <array>
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/node_layout.h"
#include "lib/format/super.h"

namespace fsctl::format {

/// A DEV_ITEM in cpu form: every field of btrfs_dev_item.
struct DevItemRecord {
  u64 devid = 0;
  u64 total_bytes = 0;  // bytes of the device fsctl may allocate from
  u64 bytes_used = 0;   // bytes of its DEV_EXTENTs
  u32 io_align = 0, io_width = 0, sector_size = 0;
  u64 type = 0;
  u64 generation = 0;
  u64 start_offset = 0;
  u32 dev_group = 0;
  u8 seek_speed = 0, bandwidth = 0;
  std::array<u8, UUID_SIZE> uuid{};  // the device's uuid
  std::array<u8, FSID_SIZE> fsid{};  // the filesystem's (metadata) fsid
  bool operator==(const DevItemRecord&) const = default;
};

/// Decodes a DEV_ITEM body. Errors: Errc::corrupt "DEV_ITEM of N bytes,
/// expect at least 98".
[[nodiscard]] Result<DevItemRecord> decode_dev_item(std::span<const u8> data);
/// The 98 bytes of `d`.
[[nodiscard]] std::vector<u8> encode_dev_item(const DevItemRecord& d);
/// Writes `d` over the item `data` in place. Errors: as decode_dev_item,
/// nothing written.
[[nodiscard]] Status store_dev_item(std::span<u8> data, const DevItemRecord& d);

/// The superblock's embedded copy (SuperBlock::dev_item) to and from the cpu form.
[[nodiscard]] DevItem dev_item_to_disk(const DevItemRecord& d);
[[nodiscard]] DevItemRecord dev_item_from_disk(const DevItem& d);

}  // namespace fsctl::format
