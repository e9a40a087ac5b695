// SPDX-License-Identifier: GPL-2.0-only
// ROOT_ITEM codec (kernel btrfs_tree.h struct btrfs_root_item; the legacy size
// is the offset of generation_v2, as the kernel's btrfs_read_root_item reads it).
#include "lib/format/root_item.h"

#include <algorithm>
#include <cstring>

#include "lib/format/item_bytes.h"
#include "lib/format/items.h"

namespace fsctl::format {

static_assert(sizeof(RootItem) == ROOT_ITEM_SIZE);

namespace {

// Copies the fields of `r` into `ri`; the v2 ones only when r.v2.
void fill(RootItem& ri, const RootInfo& r) {
  ri.generation.set(r.generation);
  ri.root_dirid.set(r.root_dirid);
  ri.bytenr.set(r.bytenr);
  ri.bytes_used.set(r.bytes_used);
  ri.last_snapshot.set(r.last_snapshot);
  ri.flags.set(r.flags);
  ri.refs.set(r.refs);
  ri.drop_progress.set(r.drop_progress);
  ri.drop_level = r.drop_level;
  ri.level = r.level;
  if (r.v2) {
    ri.generation_v2.set(r.generation_v2);
    std::memcpy(ri.uuid, r.uuid.data(), UUID_SIZE);
    std::memcpy(ri.parent_uuid, r.parent_uuid.data(), UUID_SIZE);
    std::memcpy(ri.received_uuid, r.received_uuid.data(), UUID_SIZE);
    ri.ctransid.set(r.ctransid);
    ri.otransid.set(r.otransid);
    ri.stransid.set(r.stransid);
    ri.rtransid.set(r.rtransid);
  }
}

}  // namespace

Result<RootInfo> decode_root_item(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_at_least(data, ROOT_ITEM_V1_SIZE, "root item"));
  RootItem ri{};
  std::memcpy(&ri, data.data(), std::min(data.size(), sizeof(RootItem)));
  RootInfo r;
  r.generation = ri.generation.get();
  r.root_dirid = ri.root_dirid.get();
  r.bytenr = ri.bytenr.get();
  r.bytes_used = ri.bytes_used.get();
  r.last_snapshot = ri.last_snapshot.get();
  r.flags = ri.flags.get();
  r.refs = ri.refs.get();
  r.drop_progress = ri.drop_progress.to_cpu();
  r.drop_level = ri.drop_level;
  r.level = ri.level;
  r.v2 = data.size() >= sizeof(RootItem);
  if (r.v2) {
    r.generation_v2 = ri.generation_v2.get();
    std::memcpy(r.uuid.data(), ri.uuid, UUID_SIZE);
    std::memcpy(r.parent_uuid.data(), ri.parent_uuid, UUID_SIZE);
    std::memcpy(r.received_uuid.data(), ri.received_uuid, UUID_SIZE);
    r.ctransid = ri.ctransid.get();
    r.otransid = ri.otransid.get();
    r.stransid = ri.stransid.get();
    r.rtransid = ri.rtransid.get();
  }
  if (r.level >= MAX_LEVEL) return make_error(Errc::corrupt, "root item level " + std::to_string(r.level) + " >= 8");
  return r;
}

std::vector<u8> encode_root_item(const RootInfo& r) {
  RootItem ri{};
  fill(ri, r);
  std::vector<u8> out = detail::struct_bytes(ri);
  if (!r.v2) out.resize(ROOT_ITEM_V1_SIZE);
  return out;
}

Status store_root_item(std::span<u8> data, const RootInfo& r) {
  FSCTL_TRY(detail::check_size_at_least(data, r.v2 ? sizeof(RootItem) : ROOT_ITEM_V1_SIZE, "root item"));
  // Read, change, write back: the bytes RootInfo does not carry stay.
  std::size_t n = std::min(data.size(), sizeof(RootItem));
  RootItem ri{};
  std::memcpy(&ri, data.data(), n);
  fill(ri, r);
  std::memcpy(data.data(), &ri, n);
  return {};
}

}  // namespace fsctl::format
