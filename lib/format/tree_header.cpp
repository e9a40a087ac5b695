// SPDX-License-Identifier: GPL-2.0-only
// Tree block header fields (kernel btrfs_tree.h struct btrfs_header).
#include "lib/format/tree_header.h"

#include <cstring>

#include "lib/base/assert.h"
#include "lib/format/item_bytes.h"

namespace fsctl::format {

TreeBlockHeader load_header(std::span<const u8> block) {
  FSCTL_ASSERT(block.size() >= sizeof(Header));
  auto d = detail::load_struct<Header>(block);
  TreeBlockHeader h;
  std::memcpy(h.fsid.data(), d.fsid, FSID_SIZE);
  h.bytenr = d.bytenr.get();
  h.flags = d.flags.get();
  std::memcpy(h.chunk_tree_uuid.data(), d.chunk_tree_uuid, UUID_SIZE);
  h.generation = d.generation.get();
  h.owner = d.owner.get();
  h.nritems = d.nritems.get();
  h.level = d.level;
  return h;
}

void store_header(std::span<u8> block, const TreeBlockHeader& h) {
  FSCTL_ASSERT(block.size() >= sizeof(Header));
  auto d = detail::load_struct<Header>(block);  // keeps the checksum
  std::memcpy(d.fsid, h.fsid.data(), FSID_SIZE);
  d.bytenr.set(h.bytenr);
  d.flags.set(h.flags);
  std::memcpy(d.chunk_tree_uuid, h.chunk_tree_uuid.data(), UUID_SIZE);
  d.generation.set(h.generation);
  d.owner.set(h.owner);
  d.nritems.set(h.nritems);
  d.level = h.level;
  detail::store_struct(block, d);
}

void set_header_bytenr(std::span<u8> block, u64 bytenr) {
  FSCTL_ASSERT(block.size() >= sizeof(Header));
  store_le<u64>(block.data() + offsetof(Header, bytenr), bytenr);
}

}  // namespace fsctl::format
