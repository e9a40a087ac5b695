// SPDX-License-Identifier: GPL-2.0-only
// Name tables for messages, text dumps and JSON.
#include "lib/format/names.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "lib/format/feature_flags.h"
#include "lib/format/items.h"
#include "lib/format/key.h"
#include "lib/format/super.h"

namespace fsctl::format {

std::string key_type_name(u8 t) {
  switch (t) {
    case KeyType::INODE_ITEM: return "INODE_ITEM";
    case KeyType::INODE_REF: return "INODE_REF";
    case KeyType::INODE_EXTREF: return "INODE_EXTREF";
    case KeyType::XATTR_ITEM: return "XATTR_ITEM";
    case KeyType::VERITY_DESC_ITEM: return "VERITY_DESC_ITEM";
    case KeyType::VERITY_MERKLE_ITEM: return "VERITY_MERKLE_ITEM";
    case KeyType::ORPHAN_ITEM: return "ORPHAN_ITEM";
    case KeyType::DIR_LOG_ITEM: return "DIR_LOG_ITEM";
    case KeyType::DIR_LOG_INDEX: return "DIR_LOG_INDEX";
    case KeyType::DIR_ITEM: return "DIR_ITEM";
    case KeyType::DIR_INDEX: return "DIR_INDEX";
    case KeyType::EXTENT_DATA: return "EXTENT_DATA";
    case KeyType::EXTENT_CSUM: return "EXTENT_CSUM";
    case KeyType::ROOT_ITEM: return "ROOT_ITEM";
    case KeyType::ROOT_BACKREF: return "ROOT_BACKREF";
    case KeyType::ROOT_REF: return "ROOT_REF";
    case KeyType::EXTENT_ITEM: return "EXTENT_ITEM";
    case KeyType::METADATA_ITEM: return "METADATA_ITEM";
    case KeyType::EXTENT_OWNER_REF: return "EXTENT_OWNER_REF";
    case KeyType::TREE_BLOCK_REF: return "TREE_BLOCK_REF";
    case KeyType::EXTENT_DATA_REF: return "EXTENT_DATA_REF";
    case KeyType::EXTENT_REF_V0: return "EXTENT_REF_V0";
    case KeyType::SHARED_BLOCK_REF: return "SHARED_BLOCK_REF";
    case KeyType::SHARED_DATA_REF: return "SHARED_DATA_REF";
    case KeyType::BLOCK_GROUP_ITEM: return "BLOCK_GROUP_ITEM";
    case KeyType::FREE_SPACE_INFO: return "FREE_SPACE_INFO";
    case KeyType::FREE_SPACE_EXTENT: return "FREE_SPACE_EXTENT";
    case KeyType::FREE_SPACE_BITMAP: return "FREE_SPACE_BITMAP";
    case KeyType::DEV_EXTENT: return "DEV_EXTENT";
    case KeyType::DEV_ITEM: return "DEV_ITEM";
    case KeyType::CHUNK_ITEM: return "CHUNK_ITEM";
    case KeyType::RAID_STRIPE: return "RAID_STRIPE";
    case KeyType::QGROUP_STATUS: return "QGROUP_STATUS";
    case KeyType::QGROUP_INFO: return "QGROUP_INFO";
    case KeyType::QGROUP_LIMIT: return "QGROUP_LIMIT";
    case KeyType::QGROUP_RELATION: return "QGROUP_RELATION";
    case KeyType::TEMPORARY_ITEM: return "TEMPORARY_ITEM";
    case KeyType::PERSISTENT_ITEM: return "PERSISTENT_ITEM";
    case KeyType::DEV_REPLACE: return "DEV_REPLACE";
    case KeyType::UUID_SUBVOL: return "UUID_KEY_SUBVOL";
    case KeyType::UUID_RECEIVED_SUBVOL: return "UUID_KEY_RECEIVED_SUBVOL";
    case KeyType::STRING_ITEM: return "STRING_ITEM";
    case 0: return "UNTYPED";
    default: return "UNKNOWN." + std::to_string(t);
  }
}

namespace {
const std::vector<std::pair<u64, const char*>>& tree_names() {
  static const std::vector<std::pair<u64, const char*>> t = {
      {ROOT_TREE_OBJECTID, "ROOT_TREE"},         {EXTENT_TREE_OBJECTID, "EXTENT_TREE"},
      {CHUNK_TREE_OBJECTID, "CHUNK_TREE"},       {DEV_TREE_OBJECTID, "DEV_TREE"},
      {FS_TREE_OBJECTID, "FS_TREE"},             {ROOT_TREE_DIR_OBJECTID, "ROOT_TREE_DIR"},
      {CSUM_TREE_OBJECTID, "CSUM_TREE"},         {QUOTA_TREE_OBJECTID, "QUOTA_TREE"},
      {UUID_TREE_OBJECTID, "UUID_TREE"},         {FREE_SPACE_TREE_OBJECTID, "FREE_SPACE_TREE"},
      {BLOCK_GROUP_TREE_OBJECTID, "BLOCK_GROUP_TREE"}, {RAID_STRIPE_TREE_OBJECTID, "RAID_STRIPE_TREE"},
      {BALANCE_OBJECTID, "BALANCE"},             {ORPHAN_OBJECTID, "ORPHAN"},
      {TREE_LOG_OBJECTID, "TREE_LOG"},           {TREE_LOG_FIXUP_OBJECTID, "TREE_LOG_FIXUP"},
      {TREE_RELOC_OBJECTID, "TREE_RELOC"},       {DATA_RELOC_TREE_OBJECTID, "DATA_RELOC_TREE"},
      {EXTENT_CSUM_OBJECTID, "EXTENT_CSUM"},     {FREE_SPACE_OBJECTID, "FREE_SPACE"},
      {FREE_INO_OBJECTID, "FREE_INO"},           {MULTIPLE_OBJECTIDS, "MULTIPLE"},
  };
  return t;
}
std::string lower_dash(std::string s) {
  for (auto& ch : s) ch = ch == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}
}  // namespace

std::string tree_name(u64 id) {
  for (auto& [v, n] : tree_names())
    if (v == id) return n;
  return std::to_string(id);
}

std::optional<u64> parse_tree_id(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::string t = lower_dash(text);
  for (auto& [v, n] : tree_names()) {
    std::string name = lower_dash(n);
    if (t == name) return v;
    if (name.size() > 5 && name.ends_with("-tree") && t == name.substr(0, name.size() - 5)) return v;
  }
  if (t == "data-reloc") return DATA_RELOC_TREE_OBJECTID;
  if (t == "fs" || t == "default" || t == "toplevel") return FS_TREE_OBJECTID;
  try {
    std::size_t used = 0;
    if (t[0] == '-') {
      long long v = std::stoll(t, &used, 0);
      if (used == t.size()) return static_cast<u64>(v);
    } else {
      unsigned long long v = std::stoull(t, &used, 0);
      if (used == t.size()) return static_cast<u64>(v);
    }
  } catch (...) {
  }
  return std::nullopt;
}

std::string profile_name(u64 flags) {
  switch (flags & BLOCK_GROUP_PROFILE_MASK) {
    case 0: return "single";
    case BLOCK_GROUP_DUP: return "dup";
    case BLOCK_GROUP_RAID0: return "raid0";
    case BLOCK_GROUP_RAID1: return "raid1";
    case BLOCK_GROUP_RAID10: return "raid10";
    case BLOCK_GROUP_RAID5: return "raid5";
    case BLOCK_GROUP_RAID6: return "raid6";
    case BLOCK_GROUP_RAID1C3: return "raid1c3";
    case BLOCK_GROUP_RAID1C4: return "raid1c4";
    default: return "unknown";
  }
}

std::string block_group_flags_to_string(u64 flags) {
  std::string s;
  auto add = [&](const char* n) {
    if (!s.empty()) s += "|";
    s += n;
  };
  if (flags & BLOCK_GROUP_DATA) add("DATA");
  if (flags & BLOCK_GROUP_SYSTEM) add("SYSTEM");
  if (flags & BLOCK_GROUP_METADATA) add("METADATA");
  u64 prof = flags & BLOCK_GROUP_PROFILE_MASK;
  if (prof) {
    std::string p = profile_name(flags);
    for (auto& ch : p) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    add(p.c_str());
  }
  u64 rest = flags & ~(BLOCK_GROUP_TYPE_MASK | BLOCK_GROUP_PROFILE_MASK);
  if (rest) add(hex(rest).c_str());
  return s.empty() ? "0" : s;
}

}  // namespace fsctl::format
