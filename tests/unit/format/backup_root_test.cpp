// SPDX-License-Identifier: GPL-2.0-only
// The superblock parts a commit rewrites: backup root slots
// (lib/format/backup_root.h) and sys_chunk_array (chunk_item.h
// store_sys_chunk_array).
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "lib/format/backup_root.h"
#include "lib/format/chunk_item.h"
#include "lib/format/super.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {

BackupRootRecord sample(u64 gen) {
  BackupRootRecord r;
  r.tree_root = 30474240;
  r.tree_root_gen = gen;
  r.chunk_root = 22036480;
  r.chunk_root_gen = gen - 1;
  r.extent_root = 30490624;
  r.extent_root_gen = gen;
  r.fs_root = 30408704;
  r.fs_root_gen = 5;
  r.dev_root = 30441472;
  r.dev_root_gen = 6;
  r.csum_root = 30457856;
  r.csum_root_gen = 7;
  r.total_bytes = 256ULL << 20;
  r.bytes_used = 147456;
  r.num_devices = 1;
  r.tree_root_level = 1;
  r.extent_root_level = 2;
  r.csum_root_level = 3;
  return r;
}

}  // namespace

TEST_CASE("backup root: round trip at the kernel's offsets, unused bytes zeroed") {
  SuperBlock sb{};
  std::memset(&sb.super_roots[2], 0xaa, sizeof(RootBackup));
  BackupRootRecord r = sample(9);
  store_backup_root(sb, 2, r);
  CHECK(load_backup_root(sb, 2) == r);
  auto bytes = super_bytes(sb).subspan(2859 + 2 * 168, 168);
  CHECK(load_le<u64>(bytes.data()) == 30474240);        // tree_root at 0
  CHECK(load_le<u64>(bytes.data() + 8) == 9);           // tree_root_gen at 8
  CHECK(load_le<u64>(bytes.data() + 96) == 256ULL << 20);  // total_bytes at 96
  CHECK(bytes[152] == 1);                               // tree_root_level at 152
  CHECK(bytes[154] == 2);                               // extent_root_level
  CHECK(bytes[157] == 3);                               // csum_root_level
  for (std::size_t i = 120; i < 152; ++i) CHECK(bytes[i] == 0);  // unused_64
  for (std::size_t i = 158; i < 168; ++i) CHECK(bytes[i] == 0);  // unused_8
  CHECK(load_backup_root(sb, 1) == BackupRootRecord{});
}

TEST_CASE("backup root: the next slot follows the newest and wraps") {
  SuperBlock sb{};
  CHECK(next_backup_root_slot(sb) == 0);  // none written yet
  store_backup_root(sb, 0, sample(10));
  CHECK(next_backup_root_slot(sb) == 1);
  store_backup_root(sb, 1, sample(11));
  store_backup_root(sb, 2, sample(12));
  CHECK(next_backup_root_slot(sb) == 3);
  store_backup_root(sb, 3, sample(13));
  CHECK(next_backup_root_slot(sb) == 0);
  store_backup_root(sb, 0, sample(14));
  CHECK(next_backup_root_slot(sb) == 1);
}

TEST_CASE("sys_chunk_array: store replaces the entries and zeroes the rest") {
  Chunk c;
  c.logical = 22020096;
  c.length = 8ULL << 20;
  c.owner = EXTENT_TREE_OBJECTID;
  c.stripe_len = STRIPE_LEN;
  c.type = BLOCK_GROUP_SYSTEM | BLOCK_GROUP_DUP;
  c.io_align = c.io_width = c.sector_size = 4096;
  c.num_stripes = 2;
  c.sub_stripes = 1;
  c.stripes = {{1, 22020096, {}}, {1, 30408704, {}}};
  auto entry = encode_sys_chunk_entry(c);
  REQUIRE(entry.size() == sys_chunk_entry_size(2));

  SuperBlock sb{};
  std::memset(sb.sys_chunk_array, 0xee, SYSTEM_CHUNK_ARRAY_SIZE);
  REQUIRE(store_sys_chunk_array(sb, entry));
  CHECK(sb.sys_chunk_array_size.get() == entry.size());
  CHECK(std::memcmp(sb.sys_chunk_array, entry.data(), entry.size()) == 0);
  for (std::size_t i = entry.size(); i < SYSTEM_CHUNK_ARRAY_SIZE; ++i) CHECK(sb.sys_chunk_array[i] == 0);
  auto back = decode_sys_chunk_array(std::span<const u8>(sb.sys_chunk_array), sb.sys_chunk_array_size.get());
  REQUIRE(back);
  REQUIRE(back->size() == 1);
  CHECK((*back)[0] == c);

  REQUIRE(store_sys_chunk_array(sb, {}));
  CHECK(sb.sys_chunk_array_size.get() == 0);
  CHECK(sb.sys_chunk_array[0] == 0);

  std::vector<u8> too_big(SYSTEM_CHUNK_ARRAY_SIZE + 1, 1);
  REQUIRE(store_sys_chunk_array(sb, entry));
  auto r = store_sys_chunk_array(sb, too_big);
  REQUIRE(!r);
  CHECK(r.error().code == Errc::nospc);
  CHECK(sb.sys_chunk_array_size.get() == entry.size());  // unchanged
}
