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

std::vector<std::string_view> balance_type_names(u64 flags) {
  std::vector<std::string_view> out;
  for (auto [bit, name] : {std::pair{BALANCE_FLAG_DATA, "data"}, std::pair{BALANCE_FLAG_METADATA, "metadata"},
                           std::pair{BALANCE_FLAG_SYSTEM, "system"}})
    if (flags & bit) out.emplace_back(name);
  return out;
}

std::string balance_types_to_string(u64 flags) {
  std::string out;
  for (std::string_view name : balance_type_names(flags)) out += (out.empty() ? "" : ", ") + std::string(name);
  return out.empty() ? "no type" : out;
}

}  // namespace fsctl::format
