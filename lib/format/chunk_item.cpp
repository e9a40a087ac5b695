// SPDX-License-Identifier: GPL-2.0-only
// CHUNK_ITEM and sys_chunk_array codec (kernel btrfs_tree.h struct btrfs_chunk,
// btrfs_stripe; validity rules of volumes.c btrfs_check_chunk_valid).
#include "lib/format/chunk_item.h"

#include <cstring>

#include "lib/format/cursor.h"
#include "lib/format/items.h"

namespace fsctl::format {

static bool is_pow2(u64 v) { return v && !(v & (v - 1)); }

Result<Chunk> decode_chunk(u64 logical, std::span<const u8> data, std::size_t* consumed) {
  Cursor c(data);
  FSCTL_TRY_ASSIGN(auto* h, c.take<ChunkHeader>("chunk item"));
  Chunk ch;
  ch.logical = logical;
  ch.length = h->length.get();
  ch.owner = h->owner.get();
  ch.stripe_len = h->stripe_len.get();
  ch.type = h->type.get();
  ch.io_align = h->io_align.get();
  ch.io_width = h->io_width.get();
  ch.sector_size = h->sector_size.get();
  ch.num_stripes = h->num_stripes.get();
  ch.sub_stripes = h->sub_stripes.get();
  std::string where = "chunk at logical " + std::to_string(logical);
  if (ch.num_stripes == 0) return make_error(Errc::corrupt, where + ": num_stripes is 0");
  if (ch.length == 0) return make_error(Errc::corrupt, where + ": length is 0");
  if (!is_pow2(ch.stripe_len)) return make_error(Errc::corrupt, where + ": stripe_len " + std::to_string(ch.stripe_len) + " is not a power of two");
  if (logical + ch.length < logical) return make_error(Errc::corrupt, where + ": length overflows");
  u64 prof = ch.type & BLOCK_GROUP_PROFILE_MASK;
  if (prof & (prof - 1)) return make_error(Errc::corrupt, where + ": more than one profile bit in type");
  if (!(ch.type & BLOCK_GROUP_TYPE_MASK)) return make_error(Errc::corrupt, where + ": no type bit (data/metadata/system)");
  u16 n = ch.num_stripes;
  bool ok = true;
  switch (prof) {
    case 0: ok = n == 1; break;
    case BLOCK_GROUP_DUP: ok = n == 2; break;
    case BLOCK_GROUP_RAID1: ok = n >= 2; break;
    case BLOCK_GROUP_RAID1C3: ok = n >= 3; break;
    case BLOCK_GROUP_RAID1C4: ok = n >= 4; break;
    case BLOCK_GROUP_RAID10: ok = ch.sub_stripes == 2 && n >= 2 && n % 2 == 0; break;
    case BLOCK_GROUP_RAID5: ok = n >= 2; break;
    case BLOCK_GROUP_RAID6: ok = n >= 3; break;
    default: ok = n >= 1; break;
  }
  if (!ok) return make_error(Errc::corrupt, where + ": " + std::to_string(n) + " stripes do not fit its profile");
  for (u16 i = 0; i < n; ++i) {
    FSCTL_TRY_ASSIGN(auto* s, c.take<Stripe>("chunk stripe"));
    ChunkStripe cs;
    cs.devid = s->devid.get();
    cs.physical = s->offset.get();
    std::memcpy(cs.dev_uuid.data(), s->dev_uuid, UUID_SIZE);
    ch.stripes.push_back(cs);
  }
  if (consumed) *consumed = c.pos();
  return ch;
}

std::vector<u8> encode_chunk(const Chunk& chunk) {
  std::vector<u8> out(sizeof(ChunkHeader) + chunk.stripes.size() * sizeof(Stripe));
  ChunkHeader h{};
  h.length.set(chunk.length);
  h.owner.set(chunk.owner);
  h.stripe_len.set(chunk.stripe_len);
  h.type.set(chunk.type);
  h.io_align.set(chunk.io_align);
  h.io_width.set(chunk.io_width);
  h.sector_size.set(chunk.sector_size);
  h.num_stripes.set(chunk.num_stripes);
  h.sub_stripes.set(chunk.sub_stripes);
  std::memcpy(out.data(), &h, sizeof h);
  for (std::size_t i = 0; i < chunk.stripes.size(); ++i) {
    Stripe s{};
    s.devid.set(chunk.stripes[i].devid);
    s.offset.set(chunk.stripes[i].physical);
    std::memcpy(s.dev_uuid, chunk.stripes[i].dev_uuid.data(), UUID_SIZE);
    std::memcpy(out.data() + sizeof h + i * sizeof s, &s, sizeof s);
  }
  return out;
}

Result<std::vector<Chunk>> decode_sys_chunk_array(std::span<const u8> array, u32 size) {
  if (size > array.size()) return make_error(Errc::corrupt, "sys_chunk_array_size " + std::to_string(size) + " exceeds the array");
  std::vector<Chunk> out;
  std::size_t pos = 0;
  auto arr = array.subspan(0, size);
  while (pos < size) {
    Cursor c(arr.subspan(pos));
    auto k = c.take<DiskKey>("sys_chunk_array key");
    if (!k) return make_error(k.error().context("sys_chunk_array offset " + std::to_string(pos)));
    Key key = (*k)->to_cpu();
    if (key.type != KeyType::CHUNK_ITEM)
      return make_error(Errc::corrupt, "sys_chunk_array offset " + std::to_string(pos) + ": key type " +
                                           std::to_string(key.type) + " is not CHUNK_ITEM");
    std::size_t used = 0;
    auto ch = decode_chunk(key.offset, arr.subspan(pos + sizeof(DiskKey)), &used);
    if (!ch) return make_error(ch.error().context("sys_chunk_array offset " + std::to_string(pos)));
    if (!(ch->type & BLOCK_GROUP_SYSTEM))
      return make_error(Errc::corrupt, "sys_chunk_array offset " + std::to_string(pos) + ": chunk at logical " +
                                           std::to_string(key.offset) + " is not a SYSTEM chunk");
    out.push_back(std::move(*ch));
    pos += sizeof(DiskKey) + used;
  }
  return out;
}

std::vector<u8> encode_sys_chunk_entry(const Chunk& chunk) {
  DiskKey k{};
  k.set(Key{FIRST_CHUNK_TREE_OBJECTID, KeyType::CHUNK_ITEM, chunk.logical});
  std::vector<u8> body = encode_chunk(chunk);
  std::vector<u8> out(sizeof k + body.size());
  std::memcpy(out.data(), &k, sizeof k);
  std::memcpy(out.data() + sizeof k, body.data(), body.size());
  return out;
}

std::size_t sys_chunk_entry_size(std::size_t num_stripes) {
  return sizeof(DiskKey) + sizeof(ChunkHeader) + num_stripes * sizeof(Stripe);
}

Status store_sys_chunk_array(SuperBlock& sb, std::span<const u8> entries) {
  if (entries.size() > SYSTEM_CHUNK_ARRAY_SIZE)
    return make_error(Errc::nospc, "sys_chunk_array would need " + std::to_string(entries.size()) + " bytes, more than " +
                                       std::to_string(SYSTEM_CHUNK_ARRAY_SIZE));
  std::memset(sb.sys_chunk_array, 0, SYSTEM_CHUNK_ARRAY_SIZE);
  if (!entries.empty()) std::memcpy(sb.sys_chunk_array, entries.data(), entries.size());
  sb.sys_chunk_array_size.set(static_cast<u32>(entries.size()));
  return {};
}

}  // namespace fsctl::format
