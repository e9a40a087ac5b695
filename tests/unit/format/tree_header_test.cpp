// SPDX-License-Identifier: GPL-2.0-only
// Tree block header fields (lib/format/tree_header.h) and the superblock
// byte view (super.h): the offsets are the kernel's (struct btrfs_header,
// btrfs_super_block).
#include <doctest/doctest.h>

#include <vector>

#include "lib/format/node_layout.h"
#include "lib/format/super.h"
#include "lib/format/tree_header.h"

using namespace fsctl;
using namespace fsctl::format;

TEST_CASE("header fields: store, load, set_header_bytenr; the checksum stays") {
  std::vector<u8> block(4096, 0);
  block[0] = 0x5a;  // a checksum byte
  TreeBlockHeader h;
  h.fsid[0] = 1;
  h.bytenr = 30408704;
  h.flags = NEW_BLOCK_HEADER_FLAGS;
  h.chunk_tree_uuid[15] = 2;
  h.generation = 7;
  h.owner = EXTENT_TREE_OBJECTID;
  h.nritems = 3;
  h.level = 1;
  store_header(block, h);
  CHECK(block[0] == 0x5a);
  CHECK(block[32] == 1);                                   // fsid at 32
  CHECK(load_le<u64>(block.data() + 48) == 30408704);      // bytenr at 48
  CHECK(load_le<u64>(block.data() + 56) == 0x0100000000000001ULL);  // WRITTEN, backref rev 1
  CHECK(block[79] == 2);                                   // chunk_tree_uuid at 64
  CHECK(load_le<u64>(block.data() + 80) == 7);             // generation
  CHECK(load_le<u64>(block.data() + 88) == 2);             // owner
  CHECK(load_le<u32>(block.data() + 96) == 3);             // nritems
  CHECK(block[100] == 1);                                  // level
  CHECK(load_header(block) == h);
  set_header_bytenr(block, 1ULL << 40);
  h.bytenr = 1ULL << 40;
  CHECK(load_header(block) == h);
  NodeView v(block);
  CHECK(v.bytenr() == 1ULL << 40);
  CHECK(v.fsid()[0] == 1);
  CHECK(v.chunk_tree_uuid()[15] == 2);
}

TEST_CASE("superblock byte view and label") {
  SuperBlock sb{};
  auto bytes = super_bytes(sb);
  CHECK(bytes.size() == SUPER_INFO_SIZE);
  store_le<u64>(bytes.data() + 64, SUPER_MAGIC);  // magic at 64
  CHECK(sb.magic.get() == SUPER_MAGIC);
  const SuperBlock& csb = sb;
  CHECK(super_bytes(csb).data() == bytes.data());
  CHECK(super_label(sb).empty());
  bytes[299] = 'f';  // label at 299
  bytes[300] = 's';
  auto label = super_label(sb);
  REQUIRE(label.size() == 2);
  CHECK(label[0] == 'f');
  for (std::size_t i = 0; i < LABEL_SIZE; ++i) bytes[299 + i] = 'x';  // no NUL: all 256
  CHECK(super_label(sb).size() == LABEL_SIZE);
}
