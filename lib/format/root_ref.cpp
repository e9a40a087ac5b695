// SPDX-License-Identifier: GPL-2.0-only
// ROOT_REF / ROOT_BACKREF codec (kernel btrfs_tree.h struct btrfs_root_ref).
#include "lib/format/root_ref.h"

#include <cstring>

#include "lib/format/cursor.h"
#include "lib/format/item_bytes.h"
#include "lib/format/items.h"

namespace fsctl::format {

Result<RootRefRecord> decode_root_ref(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(RootRef), "root ref"));
  Cursor c(data);
  FSCTL_TRY_ASSIGN(auto* r, c.take<RootRef>("root ref"));
  RootRefRecord out;
  out.dirid = r->dirid.get();
  out.sequence = r->sequence.get();
  FSCTL_TRY_ASSIGN(out.name, c.bytes(r->name_len.get(), "root ref name"));
  return out;
}

std::vector<u8> encode_root_ref(const RootRefRecord& r) {
  RootRef d{};
  d.dirid.set(r.dirid);
  d.sequence.set(r.sequence);
  d.name_len.set(static_cast<u16>(r.name.size()));
  std::vector<u8> out = detail::struct_bytes(d);
  out.resize(sizeof d + r.name.size());
  if (!r.name.empty()) std::memcpy(out.data() + sizeof d, r.name.data(), r.name.size());
  return out;
}

}  // namespace fsctl::format
