// SPDX-License-Identifier: GPL-2.0-only
// UUID_SUBVOL / UUID_RECEIVED_SUBVOL codec (kernel uuid-tree.c: a packed le64 list).
#include "lib/format/uuid_item.h"

#include <string>

#include "lib/format/le.h"

namespace fsctl::format {

Result<std::vector<u64>> decode_uuid_item(std::span<const u8> data) {
  if (data.size() % 8)
    return make_error(Errc::corrupt, "uuid item of " + std::to_string(data.size()) + " bytes, expect a multiple of 8");
  std::vector<u64> out;
  for (std::size_t at = 0; at < data.size(); at += 8) out.push_back(load_le<u64>(data.data() + at));
  return out;
}

std::vector<u8> encode_uuid_item(const std::vector<u64>& subvol_ids) {
  std::vector<u8> out(subvol_ids.size() * 8);
  for (std::size_t i = 0; i < subvol_ids.size(); ++i) store_le<u64>(out.data() + i * 8, subvol_ids[i]);
  return out;
}

}  // namespace fsctl::format
