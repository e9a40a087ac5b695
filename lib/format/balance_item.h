// SPDX-License-Identifier: GPL-2.0-only
// BALANCE_ITEM codec, flags only (kernel btrfs_tree.h struct
// btrfs_balance_item: le64 flags, three struct btrfs_disk_balance_args of
// 136 bytes for data, metadata and system, le64 unused[4] = 448 bytes; key
// (BALANCE_OBJECTID, TEMPORARY_ITEM, 0) in the root tree). The kernel writes
// it when a balance starts and removes it when the balance ends; one left
// behind is a paused or interrupted balance that resumes at mount.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::format {

/// Balance type and control bits of btrfs_balance_item.flags (kernel
/// volumes.h BTRFS_BALANCE_DATA/SYSTEM/METADATA/FORCE/RESUME).
inline constexpr u64 BALANCE_FLAG_DATA = 1ULL << 0, BALANCE_FLAG_SYSTEM = 1ULL << 1,
                     BALANCE_FLAG_METADATA = 1ULL << 2, BALANCE_FLAG_FORCE = 1ULL << 3,
                     BALANCE_FLAG_RESUME = 1ULL << 4;
inline constexpr std::size_t BALANCE_ITEM_SIZE = 448;

struct BalanceItemRecord {
  u64 flags = 0;
};
/// Errors: Errc::corrupt "balance item of N bytes, expect 448".
[[nodiscard]] Result<BalanceItemRecord> decode_balance_item(std::span<const u8> data);
/// The block group types a balance item's flags select, in the kernel's order
/// ("data", "metadata", "system"; BTRFS_BALANCE_DATA/METADATA/SYSTEM bits).
[[nodiscard]] std::vector<std::string_view> balance_type_names(u64 flags);
/// "data, metadata, system" for the type bits set ("no type" when none).
[[nodiscard]] std::string balance_types_to_string(u64 flags);

}  // namespace fsctl::format
