// SPDX-License-Identifier: GPL-2.0-only
// EXTENT_CSUM item codec (csum_item.h).
#include "lib/format/csum_item.h"

#include <algorithm>
#include <string>

namespace fsctl::format {

Result<CsumItem> decode_csum_item(const Key& key, std::span<const u8> data, u32 csum_size, u32 sectorsize) {
  if (key.objectid != EXTENT_CSUM_OBJECTID || key.type != KeyType::EXTENT_CSUM)
    return make_error(Errc::corrupt, "item " + key_to_string(key) + " is no csum item");
  if (csum_size == 0 || data.empty() || data.size() % csum_size)
    return make_error(Errc::corrupt, "csum item " + key_to_string(key) + " of " + std::to_string(data.size()) +
                                         " bytes, expect a multiple of " + std::to_string(csum_size));
  const u64 sectors = data.size() / csum_size;
  if (sectorsize == 0 || key.offset > ~0ULL - sectors * sectorsize)
    return make_error(Errc::corrupt, "csum item " + key_to_string(key) + " covers " + std::to_string(sectors) +
                                         " sectors past the end of the address space");
  CsumItem item;
  item.logical = key.offset;
  item.csum_size = csum_size;
  item.sums.assign(data.begin(), data.end());
  return item;
}

CsumItem csum_item_part(const CsumItem& item, u64 from, u64 to, u32 sectorsize) {
  CsumItem part;
  part.csum_size = item.csum_size;
  u64 lo = std::max(from, item.logical), hi = std::min(to, item.end(sectorsize));
  part.logical = lo;
  if (hi <= lo) return part;
  u64 first = (lo - item.logical) / sectorsize, count = (hi - lo) / sectorsize;
  auto b = item.sums.begin() + static_cast<std::ptrdiff_t>(first * item.csum_size);
  part.sums.assign(b, b + static_cast<std::ptrdiff_t>(count * item.csum_size));
  return part;
}

Key csum_item_key(const CsumItem& item) { return Key{EXTENT_CSUM_OBJECTID, KeyType::EXTENT_CSUM, item.logical}; }

}  // namespace fsctl::format
