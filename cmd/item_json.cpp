// SPDX-License-Identifier: GPL-2.0-only
// Items as JSON for dump-tree output, through the typed codecs of lib/format
// (lib/format/codecs.h); an item a codec rejects is shown as its error and hex.
#include "cmd/item_json.h"

#include <cstdio>

#include "lib/base/bytes.h"
#include "lib/format/codecs.h"
#include "lib/format/csum.h"
#include "lib/format/names.h"

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
      s.append(as_chars(b.data() + i), n);
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

// An inline or keyed backref: its type and the fields that type has.
json ref_json(const ExtentRef& r) {
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
  return o;
}

json name_json(std::span<const u8> name) { return str(name); }

Result<json> decode(const Key& key, std::span<const u8> data, u16 csum_type) {
  json j = json::object();
  switch (key.type) {
    case KeyType::INODE_ITEM: {
      FSCTL_TRY_ASSIGN(InodeRecord ii, decode_inode_item(data));
      j = {{"generation", ii.generation}, {"transid", ii.transid}, {"size", ii.size},
           {"nbytes", ii.nbytes},         {"block_group", ii.block_group}, {"nlink", ii.nlink},
           {"uid", ii.uid},               {"gid", ii.gid},  {"mode", ii.mode},
           {"rdev", ii.rdev},             {"flags", ii.flags}, {"sequence", ii.sequence}};
      return j;
    }
    case KeyType::INODE_REF: {
      FSCTL_TRY_ASSIGN(auto entries, decode_inode_refs(data, false));
      json refs = json::array();
      for (auto& r : entries) refs.push_back({{"index", r.index}, {"name_len", r.name.size()}, {"name", name_json(r.name)}});
      return json{{"refs", refs}};
    }
    case KeyType::INODE_EXTREF: {
      FSCTL_TRY_ASSIGN(auto entries, decode_inode_refs(data, true));
      json refs = json::array();
      for (auto& r : entries) refs.push_back({{"parent_objectid", r.parent_objectid}, {"index", r.index}, {"name", name_json(r.name)}});
      return json{{"refs", refs}};
    }
    case KeyType::DIR_ITEM:
    case KeyType::DIR_INDEX:
    case KeyType::XATTR_ITEM: {
      FSCTL_TRY_ASSIGN(auto entries, decode_dir_item(data));
      json items = json::array();
      for (auto& d : entries) {
        json e = {{"location", key_to_json(d.location)}, {"transid", d.transid},
                  {"data_len", d.data.size()}, {"name_len", d.name.size()}, {"type", d.type}, {"name", name_json(d.name)}};
        if (!d.data.empty()) e["data"] = hex_bytes(d.data);
        items.push_back(e);
      }
      return json{{"entries", items}};
    }
    case KeyType::EXTENT_DATA: {
      FSCTL_TRY_ASSIGN(FileExtent fe, decode_file_extent(data));
      j = {{"generation", fe.generation}, {"ram_bytes", fe.ram_bytes}, {"compression", fe.compression},
           {"encryption", fe.encryption}, {"other_encoding", fe.other_encoding}, {"type", fe.type}};
      if (fe.is_inline()) {
        j["inline_size"] = fe.inline_data.size();
      } else {
        j["disk_bytenr"] = fe.disk_bytenr;
        j["disk_num_bytes"] = fe.disk_num_bytes;
        j["offset"] = fe.offset;
        j["num_bytes"] = fe.num_bytes;
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
      FSCTL_TRY_ASSIGN(RootRefRecord r, decode_root_ref(data));
      return json{{"dirid", r.dirid}, {"sequence", r.sequence}, {"name", name_json(r.name)}};
    }
    case KeyType::EXTENT_ITEM:
    case KeyType::METADATA_ITEM: {
      FSCTL_TRY_ASSIGN(auto e, decode_extent_item(key, data));
      j = {{"refs", e.refs}, {"generation", e.generation}, {"flags", e.flags}};
      if (e.has_tree_block_info) j["tree_block_key"] = key_to_json(e.tree_block_key);
      if (e.flags & EXTENT_FLAG_TREE_BLOCK) j["level"] = e.level;
      json refs = json::array();
      for (auto& r : e.inline_refs) refs.push_back(ref_json(r));
      j["inline_refs"] = refs;
      return j;
    }
    case KeyType::TREE_BLOCK_REF:
    case KeyType::SHARED_BLOCK_REF:
    case KeyType::EXTENT_DATA_REF:
    case KeyType::SHARED_DATA_REF: {
      FSCTL_TRY_ASSIGN(ExtentRef r, decode_keyed_backref(key, data));
      json o = ref_json(r);
      o.erase("type");
      return o;
    }
    case KeyType::BLOCK_GROUP_ITEM: {
      FSCTL_TRY_ASSIGN(BlockGroupRecord b, decode_block_group_item(data));
      return json{{"used", b.used}, {"chunk_objectid", b.chunk_objectid}, {"flags", b.flags},
                  {"flags_name", block_group_flags_to_string(b.flags)}};
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
      FSCTL_TRY_ASSIGN(DevItemRecord d, decode_dev_item(data));
      return json{{"devid", d.devid}, {"total_bytes", d.total_bytes}, {"bytes_used", d.bytes_used},
                  {"io_align", d.io_align}, {"io_width", d.io_width}, {"sector_size", d.sector_size},
                  {"type", d.type}, {"generation", d.generation}, {"start_offset", d.start_offset},
                  {"dev_group", d.dev_group}, {"seek_speed", d.seek_speed}, {"bandwidth", d.bandwidth},
                  {"uuid", uuid_to_string(d.uuid)}, {"fsid", uuid_to_string(d.fsid)}};
    }
    case KeyType::DEV_EXTENT: {
      FSCTL_TRY_ASSIGN(DevExtentRecord d, decode_dev_extent(data));
      return json{{"chunk_tree", d.chunk_tree}, {"chunk_objectid", d.chunk_objectid},
                  {"chunk_offset", d.chunk_offset}, {"length", d.length},
                  {"chunk_tree_uuid", uuid_to_string(d.chunk_tree_uuid)}};
    }
    case KeyType::FREE_SPACE_INFO: {
      FSCTL_TRY_ASSIGN(FreeSpaceInfoRecord f, decode_free_space_info(data));
      return json{{"extent_count", f.extent_count}, {"flags", f.flags}};
    }
    case KeyType::FREE_SPACE_EXTENT: return json{{"start", key.objectid}, {"length", key.offset}};
    case KeyType::FREE_SPACE_BITMAP: {
      u64 set = 0;
      for (u8 b : data) set += static_cast<u64>(__builtin_popcount(b));
      return json{{"start", key.objectid}, {"length", key.offset}, {"bitmap_bytes", data.size()}, {"free_sectors", set}};
    }
    case KeyType::QGROUP_STATUS: {
      FSCTL_TRY_ASSIGN(QgroupStatusRecord s, decode_qgroup_status(data));
      j = {{"version", s.version}, {"generation", s.generation}, {"flags", s.flags}, {"rescan", s.rescan}};
      if (s.has_enable_gen) j["enable_gen"] = s.enable_gen;
      return j;
    }
    case KeyType::QGROUP_INFO: {
      FSCTL_TRY_ASSIGN(QgroupInfoRecord q, decode_qgroup_info(data));
      return json{{"qgroupid", qgroupid_to_string(key.offset)}, {"generation", q.generation}, {"rfer", q.rfer},
                  {"rfer_cmpr", q.rfer_cmpr}, {"excl", q.excl}, {"excl_cmpr", q.excl_cmpr}};
    }
    case KeyType::QGROUP_LIMIT: {
      FSCTL_TRY_ASSIGN(QgroupLimitRecord q, decode_qgroup_limit(data));
      return json{{"qgroupid", qgroupid_to_string(key.offset)}, {"flags", q.flags}, {"max_rfer", q.max_rfer},
                  {"max_excl", q.max_excl}, {"rsv_rfer", q.rsv_rfer}, {"rsv_excl", q.rsv_excl}};
    }
    case KeyType::QGROUP_RELATION:
      return json{{"child", qgroupid_to_string(key.objectid)}, {"parent", qgroupid_to_string(key.offset)}};
    case KeyType::UUID_SUBVOL:
    case KeyType::UUID_RECEIVED_SUBVOL: {
      FSCTL_TRY_ASSIGN(auto ids, decode_uuid_item(data));
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
  // Appended piece by piece: "(" + std::to_string(...) makes GCC 12 at -O3
  // warn a false -Wrestrict (GCC bug 105329, the prepend to a temporary).
  std::string s = "(";
  s += std::to_string(k.objectid);
  s += ' ';
  s += key_type_name(k.type);
  s += ' ';
  s += std::to_string(k.offset);
  s += ')';
  return s;
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
