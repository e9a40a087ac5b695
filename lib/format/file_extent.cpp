// SPDX-License-Identifier: GPL-2.0-only
// EXTENT_DATA codec (kernel btrfs_tree.h struct btrfs_file_extent_item;
// sizes as tree-checker.c check_extent_data_item demands them).
#include "lib/format/file_extent.h"

#include <algorithm>

#include "lib/base/assert.h"
#include "lib/format/item_bytes.h"
#include "lib/format/items.h"

namespace fsctl::format {

bool FileExtent::is_inline() const { return type == FILE_EXTENT_INLINE; }

static_assert(sizeof(FileExtentItem) == FILE_EXTENT_ITEM_SIZE && FILE_EXTENT_INLINE_DATA_START == FILE_EXTENT_INLINE_HEADER_SIZE);

Result<FileExtent> decode_file_extent(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_at_least(data, FILE_EXTENT_INLINE_DATA_START, "file extent item"));
  // The header fields every type has; the rest of the struct only when present.
  FileExtentItem d{};
  std::memcpy(&d, data.data(), std::min(data.size(), sizeof d));
  FileExtent fe;
  fe.generation = d.generation.get();
  fe.ram_bytes = d.ram_bytes.get();
  fe.compression = d.compression;
  fe.encryption = d.encryption;
  fe.other_encoding = d.other_encoding.get();
  fe.type = d.type;
  switch (fe.type) {
    case FILE_EXTENT_INLINE:
      fe.inline_data = data.subspan(FILE_EXTENT_INLINE_DATA_START);
      return fe;
    case FILE_EXTENT_REG:
    case FILE_EXTENT_PREALLOC:
      FSCTL_TRY(detail::check_size_exact(data, sizeof(FileExtentItem),
                                         fe.type == FILE_EXTENT_REG ? "regular file extent item" : "prealloc file extent item"));
      fe.disk_bytenr = d.disk_bytenr.get();
      fe.disk_num_bytes = d.disk_num_bytes.get();
      fe.offset = d.offset.get();
      fe.num_bytes = d.num_bytes.get();
      return fe;
    default:
      return make_error(Errc::corrupt, "file extent item of type " + std::to_string(fe.type) +
                                           ", expect 0 (inline), 1 (regular) or 2 (prealloc)");
  }
}

std::vector<u8> encode_file_extent(const FileExtent& fe) {
  FSCTL_ASSERT(fe.type <= FILE_EXTENT_PREALLOC);
  FileExtentItem d{};
  d.generation.set(fe.generation);
  d.ram_bytes.set(fe.ram_bytes);
  d.compression = fe.compression;
  d.encryption = fe.encryption;
  d.other_encoding.set(fe.other_encoding);
  d.type = fe.type;
  d.disk_bytenr.set(fe.disk_bytenr);
  d.disk_num_bytes.set(fe.disk_num_bytes);
  d.offset.set(fe.offset);
  d.num_bytes.set(fe.num_bytes);
  std::vector<u8> out = detail::struct_bytes(d);
  if (fe.is_inline()) {
    out.resize(FILE_EXTENT_INLINE_DATA_START + fe.inline_data.size());
    if (!fe.inline_data.empty()) std::memcpy(out.data() + FILE_EXTENT_INLINE_DATA_START, fe.inline_data.data(), fe.inline_data.size());
  }
  return out;
}

}  // namespace fsctl::format
