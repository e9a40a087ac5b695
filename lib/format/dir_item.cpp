// SPDX-License-Identifier: GPL-2.0-only
// DIR_ITEM / DIR_INDEX / XATTR_ITEM codec (kernel btrfs_tree.h struct btrfs_dir_item).
#include "lib/format/dir_item.h"

#include <cstring>

#include "lib/format/cursor.h"
#include "lib/format/items.h"

namespace fsctl::format {

Result<std::vector<DirEntry>> decode_dir_item(std::span<const u8> data) {
  Cursor c(data);
  std::vector<DirEntry> out;
  while (c.remaining()) {
    FSCTL_TRY_ASSIGN(auto* d, c.take<DirItem>("dir item"));
    DirEntry e;
    e.location = d->location.to_cpu();
    e.transid = d->transid.get();
    e.type = d->type;
    FSCTL_TRY_ASSIGN(e.name, c.bytes(d->name_len.get(), "dir item name"));
    FSCTL_TRY_ASSIGN(e.data, c.bytes(d->data_len.get(), "dir item data"));
    out.push_back(e);
  }
  return out;
}

std::vector<u8> encode_dir_item(const std::vector<DirEntry>& entries) {
  std::vector<u8> out;
  for (const auto& e : entries) {
    DirItem d{};
    d.location.set(e.location);
    d.transid.set(e.transid);
    d.data_len.set(static_cast<u16>(e.data.size()));
    d.name_len.set(static_cast<u16>(e.name.size()));
    d.type = e.type;
    std::size_t at = out.size();
    out.resize(at + sizeof d + e.name.size() + e.data.size());
    std::memcpy(out.data() + at, &d, sizeof d);
    if (!e.name.empty()) std::memcpy(out.data() + at + sizeof d, e.name.data(), e.name.size());
    if (!e.data.empty()) std::memcpy(out.data() + at + sizeof d + e.name.size(), e.data.data(), e.data.size());
  }
  return out;
}

}  // namespace fsctl::format
