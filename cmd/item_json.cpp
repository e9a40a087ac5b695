// SPDX-License-Identifier: GPL-2.0-only
// Item decoders for dump-tree output. Bounds-checked through format::Cursor.
#include "cmd/item_json.h"

#include <cstdio>

#include "lib/format/csum.h"
#include "lib/format/cursor.h"
#include "lib/format/decode.h"
#include "lib/format/items.h"
#include "lib/format/names.h"
#include "lib/format/super.h"

namespace fsctl::cmd {
using namespace fsctl::format;
using json = nlohmann::ordered_json;

// Length of the well-formed UTF-8 sequence at b[i] (RFC 3629: no overlongs,
// no surrogates, at most U+10FFFF), or 0 when the byte does not start one.
static std::size_t utf8_seq_len(std::span<const u8> b, std::size_t i) {
  u8 c = b[i];
  if (c < 0x80) return 1;
  std::size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > b.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b[i + k] & 0xC0) != 0x80) return 0;
  u8 c1 = b[i + 1];
  if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F)) return 0;
  return n;
}

std::string utf8_text(std::span<const u8> b) {
  std::string s;
  s.reserve(b.size());
  for (std::size_t i = 0; i < b.size();) {
    std::size_t n = utf8_seq_len(b, i);
    if (n) {
      s.append(reinterpret_cast<const char*>(b.data() + i), n);
      i += n;
    } else {
      char esc[5];
      std::snprintf(esc, sizeof esc, "\\x%02x", b[i]);
      s += esc;
      ++i;
    }
  }
  return s;
}

namespace {

std::string hex_bytes(std::span<const u8> b, std::size_t limit = 256) {
  std::string s;
  char buf[3];
  for (std::size_t i = 0; i < b.size() && i < limit; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", b[i]);
    s += buf;
  }
  if (b.size() > limit) s += "...";
  return s;
}
std::string str(std::span<const u8> b) { return utf8_text(b); }
std::string qgroupid(u64 id) { return std::to_string(id >> QGROUP_LEVEL_SHIFT) + "/" + std::to_string(id & ((1ULL << QGROUP_LEVEL_SHIFT) - 1)); }

Result<json> decode(const Key& key, std::span<const u8> data, u16 csum_type) {
  Cursor c(data);
  json j = json::object();
  switch (key.type) {
    case KeyType::INODE_ITEM: {
      FSCTL_TRY_ASSIGN(auto* ii, c.take<InodeItem>("inode item"));
      j = {{"generation", ii->generation.get()}, {"transid", ii->transid.get()}, {"size", ii->size.get()},
           {"nbytes", ii->nbytes.get()},         {"block_group", ii->block_group.get()}, {"nlink", ii->nlink.get()},
           {"uid", ii->uid.get()},               {"gid", ii->gid.get()},  {"mode", ii->mode.get()},
           {"rdev", ii->rdev.get()},             {"flags", ii->flags.get()}, {"sequence", ii->sequence.get()}};
      return j;
    }
    case KeyType::INODE_REF: {
      json refs = json::array();
      while (c.remaining()) {
        FSCTL_TRY_ASSIGN(auto* r, c.take<InodeRef>("inode ref"));
        FSCTL_TRY_ASSIGN(auto name, c.bytes(r->name_len.get(), "inode ref name"));
        refs.push_back({{"index", r->index.get()}, {"name_len", r->name_len.get()}, {"name", str(name)}});
      }
      return json{{"refs", refs}};
    }
    case KeyType::INODE_EXTREF: {
      json refs = json::array();
      while (c.remaining()) {
        FSCTL_TRY_ASSIGN(auto* r, c.take<InodeExtref>("inode extref"));
        FSCTL_TRY_ASSIGN(auto name, c.bytes(r->name_len.get(), "inode extref name"));
        refs.push_back({{"parent_objectid", r->parent_objectid.get()}, {"index", r->index.get()}, {"name", str(name)}});
      }
      return json{{"refs", refs}};
    }
    case KeyType::DIR_ITEM:
    case KeyType::DIR_INDEX:
    case KeyType::XATTR_ITEM: {
      json items = json::array();
      while (c.remaining()) {
        FSCTL_TRY_ASSIGN(auto* d, c.take<DirItem>("dir item"));
        FSCTL_TRY_ASSIGN(auto name, c.bytes(d->name_len.get(), "dir item name"));
        FSCTL_TRY_ASSIGN(auto val, c.bytes(d->data_len.get(), "dir item data"));
        json e = {{"location", key_to_json(d->location.to_cpu())}, {"transid", d->transid.get()},
                  {"data_len", d->data_len.get()}, {"name_len", d->name_len.get()}, {"type", d->type}, {"name", str(name)}};
        if (d->data_len.get()) e["data"] = hex_bytes(val);
        items.push_back(e);
      }
      return json{{"entries", items}};
    }
    case KeyType::EXTENT_DATA: {
      if (data.size() < FILE_EXTENT_INLINE_DATA_START)
        return make_error(Errc::corrupt, "file extent item of " + std::to_string(data.size()) + " bytes");
      FileExtentItem fe{};
      std::memcpy(&fe, data.data(), std::min(data.size(), sizeof fe));
      j = {{"generation", fe.generation.get()}, {"ram_bytes", fe.ram_bytes.get()}, {"compression", fe.compression},
           {"encryption", fe.encryption}, {"other_encoding", fe.other_encoding.get()}, {"type", fe.type}};
      if (fe.type == FILE_EXTENT_INLINE) {
        j["inline_size"] = data.size() - FILE_EXTENT_INLINE_DATA_START;
      } else {
        if (data.size() < sizeof(FileExtentItem))
          return make_error(Errc::corrupt, "regular file extent item of " + std::to_string(data.size()) + " bytes");
        j["disk_bytenr"] = fe.disk_bytenr.get();
        j["disk_num_bytes"] = fe.disk_num_bytes.get();
        j["offset"] = fe.offset.get();
        j["num_bytes"] = fe.num_bytes.get();
      }
      return j;
    }
    case KeyType::EXTENT_CSUM: {
      std::size_t cs = csum_type_known(csum_type) ? csum_size(csum_type) : 4;
      j = {{"csums", data.size() / cs}, {"csum_size", cs}};
      return j;
    }
    case KeyType::ROOT_ITEM: {
      FSCTL_TRY_ASSIGN(auto r, decode_root_item(data));
      j = {{"generation", r.generation}, {"root_dirid", r.root_dirid}, {"bytenr", r.bytenr}, {"level", r.level},
           {"refs", r.refs}, {"bytes_used", r.bytes_used}, {"last_snapshot", r.last_snapshot}, {"flags", r.flags},
           {"drop_progress", key_to_json(r.drop_progress)}, {"drop_level", r.drop_level}};
      if (r.v2) {
        j["uuid"] = uuid_to_string(r.uuid);
        j["parent_uuid"] = uuid_to_string(r.parent_uuid);
        j["received_uuid"] = uuid_to_string(r.received_uuid);
        j["ctransid"] = r.ctransid;
        j["otransid"] = r.otransid;
        j["stransid"] = r.stransid;
        j["rtransid"] = r.rtransid;
      }
      return j;
    }
    case KeyType::ROOT_REF:
    case KeyType::ROOT_BACKREF: {
      FSCTL_TRY_ASSIGN(auto* r, c.take<RootRef>("root ref"));
      FSCTL_TRY_ASSIGN(auto name, c.bytes(r->name_len.get(), "root ref name"));
      return json{{"dirid", r->dirid.get()}, {"sequence", r->sequence.get()}, {"name", str(name)}};
    }
    case KeyType::EXTENT_ITEM:
    case KeyType::METADATA_ITEM: {
      FSCTL_TRY_ASSIGN(auto e, decode_extent_item(key, data));
      j = {{"refs", e.refs}, {"generation", e.generation}, {"flags", e.flags}};
      if (e.has_tree_block_info) j["tree_block_key"] = key_to_json(e.tree_block_key);
      if (e.flags & EXTENT_FLAG_TREE_BLOCK) j["level"] = e.level;
      json refs = json::array();
      for (auto& r : e.inline_refs) {
        json o = {{"type", key_type_name(r.type)}};
        if (r.type == KeyType::TREE_BLOCK_REF || r.type == KeyType::EXTENT_OWNER_REF) o["root"] = r.root;
        if (r.type == KeyType::SHARED_BLOCK_REF) o["parent"] = r.parent;
        if (r.type == KeyType::SHARED_DATA_REF) {
          o["parent"] = r.parent;
          o["count"] = r.count;
        }
        if (r.type == KeyType::EXTENT_DATA_REF) {
          o["root"] = r.root;
          o["objectid"] = r.objectid;
          o["offset"] = r.offset;
          o["count"] = r.count;
        }
        refs.push_back(o);
      }
      j["inline_refs"] = refs;
      return j;
    }
    case KeyType::TREE_BLOCK_REF: return json{{"root", key.offset}};
    case KeyType::SHARED_BLOCK_REF: return json{{"parent", key.offset}};
    case KeyType::EXTENT_DATA_REF: {
      FSCTL_TRY_ASSIGN(auto* d, c.take<ExtentDataRef>("extent data ref"));
      return json{{"root", d->root.get()}, {"objectid", d->objectid.get()}, {"offset", d->offset.get()}, {"count", d->count.get()}};
    }
    case KeyType::SHARED_DATA_REF: {
      FSCTL_TRY_ASSIGN(auto* d, c.take<SharedDataRef>("shared data ref"));
      return json{{"parent", key.offset}, {"count", d->count.get()}};
    }
    case KeyType::BLOCK_GROUP_ITEM: {
      FSCTL_TRY_ASSIGN(auto* b, c.take<BlockGroupItem>("block group item"));
      return json{{"used", b->used.get()}, {"chunk_objectid", b->chunk_objectid.get()}, {"flags", b->flags.get()},
                  {"flags_name", block_group_flags_to_string(b->flags.get())}};
    }
    case KeyType::CHUNK_ITEM: {
      FSCTL_TRY_ASSIGN(auto ch, decode_chunk(key.offset, data));
      json stripes = json::array();
      for (auto& s : ch.stripes)
        stripes.push_back({{"devid", s.devid}, {"offset", s.physical}, {"dev_uuid", uuid_to_string(s.dev_uuid)}});
      return json{{"length", ch.length}, {"owner", ch.owner}, {"stripe_len", ch.stripe_len}, {"type", ch.type},
                  {"type_name", block_group_flags_to_string(ch.type)}, {"io_align", ch.io_align}, {"io_width", ch.io_width},
                  {"sector_size", ch.sector_size}, {"num_stripes", ch.num_stripes}, {"sub_stripes", ch.sub_stripes},
                  {"stripes", stripes}};
    }
    case KeyType::DEV_ITEM: {
      FSCTL_TRY_ASSIGN(auto* d, c.take<DevItem>("dev item"));
      return json{{"devid", d->devid.get()}, {"total_bytes", d->total_bytes.get()}, {"bytes_used", d->bytes_used.get()},
                  {"io_align", d->io_align.get()}, {"io_width", d->io_width.get()}, {"sector_size", d->sector_size.get()},
                  {"type", d->type.get()}, {"generation", d->generation.get()}, {"start_offset", d->start_offset.get()},
                  {"dev_group", d->dev_group.get()}, {"seek_speed", d->seek_speed}, {"bandwidth", d->bandwidth},
                  {"uuid", uuid_to_string(d->uuid)}, {"fsid", uuid_to_string(d->fsid)}};
    }
    case KeyType::DEV_EXTENT: {
      FSCTL_TRY_ASSIGN(auto* d, c.take<DevExtent>("dev extent"));
      return json{{"chunk_tree", d->chunk_tree.get()}, {"chunk_objectid", d->chunk_objectid.get()},
                  {"chunk_offset", d->chunk_offset.get()}, {"length", d->length.get()},
                  {"chunk_tree_uuid", uuid_to_string(d->chunk_tree_uuid)}};
    }
    case KeyType::FREE_SPACE_INFO: {
      FSCTL_TRY_ASSIGN(auto* f, c.take<FreeSpaceInfo>("free space info"));
      return json{{"extent_count", f->extent_count.get()}, {"flags", f->flags.get()}};
    }
    case KeyType::FREE_SPACE_EXTENT: return json{{"start", key.objectid}, {"length", key.offset}};
    case KeyType::FREE_SPACE_BITMAP: {
      u64 set = 0;
      for (u8 b : data) set += static_cast<u64>(__builtin_popcount(b));
      return json{{"start", key.objectid}, {"length", key.offset}, {"bitmap_bytes", data.size()}, {"free_sectors", set}};
    }
    case KeyType::QGROUP_STATUS: {
      if (data.size() < 32) return make_error(Errc::corrupt, "qgroup status item of " + std::to_string(data.size()) + " bytes");
      QgroupStatusItem s{};
      std::memcpy(&s, data.data(), std::min(data.size(), sizeof s));
      j = {{"version", s.version.get()}, {"generation", s.generation.get()}, {"flags", s.flags.get()}, {"rescan", s.rescan.get()}};
      if (data.size() >= sizeof s) j["enable_gen"] = s.enable_gen.get();
      return j;
    }
    case KeyType::QGROUP_INFO: {
      FSCTL_TRY_ASSIGN(auto* q, c.take<QgroupInfoItem>("qgroup info"));
      return json{{"qgroupid", qgroupid(key.offset)}, {"generation", q->generation.get()}, {"rfer", q->rfer.get()},
                  {"rfer_cmpr", q->rfer_cmpr.get()}, {"excl", q->excl.get()}, {"excl_cmpr", q->excl_cmpr.get()}};
    }
    case KeyType::QGROUP_LIMIT: {
      FSCTL_TRY_ASSIGN(auto* q, c.take<QgroupLimitItem>("qgroup limit"));
      return json{{"qgroupid", qgroupid(key.offset)}, {"flags", q->flags.get()}, {"max_rfer", q->max_rfer.get()},
                  {"max_excl", q->max_excl.get()}, {"rsv_rfer", q->rsv_rfer.get()}, {"rsv_excl", q->rsv_excl.get()}};
    }
    case KeyType::QGROUP_RELATION: return json{{"child", qgroupid(key.objectid)}, {"parent", qgroupid(key.offset)}};
    case KeyType::UUID_SUBVOL:
    case KeyType::UUID_RECEIVED_SUBVOL: {
      json ids = json::array();
      while (c.remaining()) {
        FSCTL_TRY_ASSIGN(auto* v, c.take<le64>("uuid item subvol id"));
        ids.push_back(v->get());
      }
      return json{{"subvol_ids", ids}};
    }
    case KeyType::ORPHAN_ITEM: return json::object();
    default: return json{{"hex", hex_bytes(data)}};
  }
}

void flatten(const json& j, std::string& out) {
  if (j.is_object()) {
    bool first = true;
    for (auto& [k, v] : j.items()) {
      if (!first) out += ' ';
      first = false;
      out += k + ' ';
      flatten(v, out);
    }
  } else if (j.is_array()) {
    out += '[';
    bool first = true;
    for (auto& v : j) {
      if (!first) out += ", ";
      first = false;
      if (v.is_object()) out += '{';
      flatten(v, out);
      if (v.is_object()) out += '}';
    }
    out += ']';
  } else if (j.is_string()) {
    out += j.get<std::string>();
  } else {
    out += j.dump();
  }
}

}  // namespace

json key_to_json(const Key& k) {
  return json{{"objectid", k.objectid}, {"type", k.type}, {"type_name", key_type_name(k.type)}, {"offset", k.offset}};
}

std::string key_text(const Key& k) {
  return "(" + std::to_string(k.objectid) + " " + key_type_name(k.type) + " " + std::to_string(k.offset) + ")";
}

json item_to_json(const Key& key, std::span<const u8> data, u16 csum_type) {
  auto r = decode(key, data, csum_type);
  if (!r) return json{{"error", r.error().message}, {"hex", hex_bytes(data)}};
  return *r;
}

std::string json_to_text_fields(const json& j) {
  std::string s;
  flatten(j, s);
  return s;
}

}  // namespace fsctl::cmd
