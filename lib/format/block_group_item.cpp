// SPDX-License-Identifier: GPL-2.0-only
// BLOCK_GROUP_ITEM codec (kernel btrfs_tree.h struct btrfs_block_group_item).
#include "lib/format/block_group_item.h"

#include "lib/format/item_bytes.h"
#include "lib/format/items.h"

namespace fsctl::format {

static_assert(sizeof(BlockGroupItem) == BLOCK_GROUP_ITEM_SIZE);

namespace {
BlockGroupItem to_disk(const BlockGroupRecord& bg) {
  BlockGroupItem d{};
  d.used.set(bg.used);
  d.chunk_objectid.set(bg.chunk_objectid);
  d.flags.set(bg.flags);
  return d;
}
}  // namespace

Result<BlockGroupRecord> decode_block_group_item(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(BlockGroupItem), "block group item"));
  auto d = detail::load_struct<BlockGroupItem>(data);
  return BlockGroupRecord{d.used.get(), d.chunk_objectid.get(), d.flags.get()};
}

std::vector<u8> encode_block_group_item(const BlockGroupRecord& bg) { return detail::struct_bytes(to_disk(bg)); }

Status store_block_group_item(std::span<u8> data, const BlockGroupRecord& bg) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(BlockGroupItem), "block group item"));
  detail::store_struct(data, to_disk(bg));
  return {};
}

}  // namespace fsctl::format
