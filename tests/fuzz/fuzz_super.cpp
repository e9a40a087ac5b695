// SPDX-License-Identifier: GPL-2.0-only
// libFuzzer target: bytes → superblock. Runs validate_super on the bytes as
// given and again with the checksum fixed (so the fuzzer gets past it), then
// decodes sys_chunk_array, adds each chunk to a ChunkMap and maps logical
// addresses in and around every chunk; the backup root slots and the
// decoded sys_chunk_array round-trip through their codecs
// (backup_root.h, chunk_item.h store_sys_chunk_array). Nothing may crash or
// overrun.
#include <cstring>

#include "lib/format/backup_root.h"
#include "lib/format/chunk_item.h"
#include "lib/format/csum.h"
#include "lib/format/super.h"
#include "lib/volumes/chunk_map.h"

using namespace fsctl;
using namespace fsctl::format;

extern "C" int LLVMFuzzerTestOneInput(const u8* data, std::size_t size) {
  SuperBlock sb{};
  std::memcpy(super_bytes(sb).data(), data, std::min<std::size_t>(size, SUPER_INFO_SIZE));
  (void)validate_super(sb, SUPER_INFO_OFFSET);
  u16 ct = sb.csum_type.get();
  if (csum_type_known(ct)) {
    std::span<u8> bytes = super_bytes(sb);
    CsumBytes c = compute_csum(ct, bytes.subspan(CSUM_SIZE_MAX));
    std::memcpy(sb.csum, c.data(), c.size());
    (void)validate_super(sb, sb.bytenr.get());
  }
  // Backup roots: storing a slot's record and loading it gives the record.
  {
    SuperBlock copy = sb;
    for (int slot = 0; slot < NUM_BACKUP_ROOTS; ++slot) {
      BackupRootRecord r = load_backup_root(sb, slot);
      store_backup_root(copy, slot, r);
      if (!(load_backup_root(copy, slot) == r)) __builtin_trap();
    }
    int next = next_backup_root_slot(sb);
    if (next < 0 || next >= NUM_BACKUP_ROOTS) __builtin_trap();
  }
  auto chunks = decode_sys_chunk_array(std::span<const u8>(sb.sys_chunk_array), sb.sys_chunk_array_size.get());
  if (!chunks) return 0;
  // The decoded chunks, encoded and stored again, decode to the same chunks.
  {
    std::vector<u8> entries;
    for (auto& c : *chunks) {
      auto e = encode_sys_chunk_entry(c);
      entries.insert(entries.end(), e.begin(), e.end());
    }
    SuperBlock copy = sb;
    if (store_sys_chunk_array(copy, entries)) {
      auto back = decode_sys_chunk_array(std::span<const u8>(copy.sys_chunk_array), copy.sys_chunk_array_size.get());
      if (!back || !(*back == *chunks)) __builtin_trap();
    }
  }
  volumes::ChunkMap map;
  for (auto& c : *chunks) (void)map.add(c);
  u64 ns = sb.nodesize.get() ? sb.nodesize.get() : 4096;
  for (auto& [logical, c] : map.chunks()) {
    for (u64 probe : {logical, logical + c.length / 2, logical + c.length - 1, logical + c.length, logical - 1,
                      sb.chunk_root.get(), sb.root.get()}) {
      for (u64 len : {u64{1}, ns, c.stripe_len, c.length}) (void)map.map(probe, len);
    }
  }
  return 0;
}
