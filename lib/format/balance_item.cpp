// SPDX-License-Identifier: GPL-2.0-only
// BALANCE_ITEM codec (kernel btrfs_tree.h struct btrfs_balance_item).
#include "lib/format/balance_item.h"

#include "lib/format/item_bytes.h"
#include "lib/format/le.h"

namespace fsctl::format {

Result<BalanceItemRecord> decode_balance_item(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_exact(data, BALANCE_ITEM_SIZE, "balance item"));
  BalanceItemRecord out;
  out.flags = load_le<u64>(data.data());
  return out;
}

std::string balance_types_to_string(u64 flags) {
  std::string out;
  for (auto [bit, name] : {std::pair{BALANCE_FLAG_DATA, "data"}, std::pair{BALANCE_FLAG_METADATA, "metadata"},
                           std::pair{BALANCE_FLAG_SYSTEM, "system"}})
    if (flags & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out.empty() ? "no type" : out;
}

}  // namespace fsctl::format
