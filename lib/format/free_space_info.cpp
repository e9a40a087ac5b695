// SPDX-License-Identifier: GPL-2.0-only
// FREE_SPACE_INFO codec (kernel btrfs_tree.h struct btrfs_free_space_info).
#include "lib/format/free_space_info.h"

#include "lib/format/item_bytes.h"
#include "lib/format/items.h"

namespace fsctl::format {

namespace {
FreeSpaceInfo to_disk(const FreeSpaceInfoRecord& f) {
  FreeSpaceInfo d{};
  d.extent_count.set(f.extent_count);
  d.flags.set(f.flags);
  return d;
}
}  // namespace

Result<FreeSpaceInfoRecord> decode_free_space_info(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(FreeSpaceInfo), "FREE_SPACE_INFO"));
  auto d = detail::load_struct<FreeSpaceInfo>(data);
  return FreeSpaceInfoRecord{d.extent_count.get(), d.flags.get()};
}

std::vector<u8> encode_free_space_info(const FreeSpaceInfoRecord& f) { return detail::struct_bytes(to_disk(f)); }

Status store_free_space_info(std::span<u8> data, const FreeSpaceInfoRecord& f) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(FreeSpaceInfo), "FREE_SPACE_INFO"));
  detail::store_struct(data, to_disk(f));
  return {};
}

}  // namespace fsctl::format
