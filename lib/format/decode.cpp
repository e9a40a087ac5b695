// SPDX-License-Identifier: GPL-2.0-only
// Bounds-checked decoders (STYLE.md "On-disk structures"): chunk items, the
// sys_chunk_array, extent items with inline refs, root items.
#include "lib/format/decode.h"

#include <algorithm>
#include <cstring>

#include "lib/format/csum.h"
#include "lib/format/cursor.h"

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

Result<ExtentRecord> decode_extent_item(const Key& key, std::span<const u8> data) {
  Cursor c(data);
  if (data.size() < sizeof(ExtentItem))
    return make_error(Errc::unsupported, "extent item of " + std::to_string(data.size()) + " bytes (v0 format?)");
  FSCTL_TRY_ASSIGN(auto* ei, c.take<ExtentItem>("extent item"));
  ExtentRecord r;
  r.refs = ei->refs.get();
  r.generation = ei->generation.get();
  r.flags = ei->flags.get();
  if (key.type == KeyType::METADATA_ITEM) {
    r.level = static_cast<u8>(key.offset);
  } else if (r.flags & EXTENT_FLAG_TREE_BLOCK) {
    FSCTL_TRY_ASSIGN(auto* info, c.take<TreeBlockInfo>("tree_block_info"));
    r.has_tree_block_info = true;
    r.tree_block_key = info->key.to_cpu();
    r.level = info->level;
  }
  while (c.remaining() > 0) {
    FSCTL_TRY_ASSIGN(u8 type, c.u8_("inline ref type"));
    ExtentRef ref;
    ref.type = type;
    switch (type) {
      case KeyType::TREE_BLOCK_REF:
      case KeyType::EXTENT_OWNER_REF: {
        FSCTL_TRY_ASSIGN(auto* v, c.take<le64>("inline ref offset"));
        ref.root = v->get();
        break;
      }
      case KeyType::SHARED_BLOCK_REF: {
        FSCTL_TRY_ASSIGN(auto* v, c.take<le64>("inline ref offset"));
        ref.parent = v->get();
        break;
      }
      case KeyType::EXTENT_DATA_REF: {
        FSCTL_TRY_ASSIGN(auto* d, c.take<ExtentDataRef>("inline extent_data_ref"));
        ref.root = d->root.get();
        ref.objectid = d->objectid.get();
        ref.offset = d->offset.get();
        ref.count = d->count.get();
        break;
      }
      case KeyType::SHARED_DATA_REF: {
        FSCTL_TRY_ASSIGN(auto* v, c.take<le64>("inline ref offset"));
        FSCTL_TRY_ASSIGN(auto* cnt, c.take<le32>("shared data ref count"));
        ref.parent = v->get();
        ref.count = cnt->get();
        break;
      }
      default:
        return make_error(Errc::corrupt, "unknown inline ref type " + std::to_string(type) + " at item offset " +
                                             std::to_string(c.pos() - 1));
    }
    r.inline_refs.push_back(ref);
  }
  return r;
}

Result<RootInfo> decode_root_item(std::span<const u8> data) {
  if (data.size() < ROOT_ITEM_V1_SIZE)
    return make_error(Errc::corrupt, "root item of " + std::to_string(data.size()) + " bytes, need at least " +
                                         std::to_string(ROOT_ITEM_V1_SIZE));
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

u64 hash_extent_data_ref(u64 root, u64 objectid, u64 offset) {
  u8 b[8];
  store_le<u64>(b, root);
  u32 high = crc32c_raw(~0u, b);
  store_le<u64>(b, objectid);
  u32 low = crc32c_raw(~0u, b);
  store_le<u64>(b, offset);
  low = crc32c_raw(low, b);
  return (static_cast<u64>(high) << 31) ^ static_cast<u64>(low);
}

}  // namespace fsctl::format
