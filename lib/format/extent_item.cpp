// SPDX-License-Identifier: GPL-2.0-only
// EXTENT_ITEM / METADATA_ITEM codec with inline backrefs (kernel btrfs_tree.h;
// order of inline refs: tree-checker.c check_extent_item; a new tree block's
// item: extent-tree.c alloc_reserved_tree_block).
#include "lib/format/extent_item.h"

#include <algorithm>
#include <cstring>

#include "lib/format/csum.h"
#include "lib/format/cursor.h"
#include "lib/format/items.h"

namespace fsctl::format {

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

std::vector<u8> encode_extent_item(const ExtentRecord& rec) {
  std::vector<u8> out;
  // resize + memcpy rather than insert(ptr, ptr + n): GCC 12 at -O3 reports
  // false array-bounds/stringop-overread warnings for the latter.
  auto put = [&](const void* p, std::size_t n) {
    std::size_t at = out.size();
    out.resize(at + n);
    std::memcpy(out.data() + at, p, n);
  };
  auto put64 = [&](u64 v) {
    u8 b[8];
    store_le<u64>(b, v);
    put(b, 8);
  };
  ExtentItem ei{};
  ei.refs.set(rec.refs);
  ei.generation.set(rec.generation);
  ei.flags.set(rec.flags);
  put(&ei, sizeof ei);
  if (rec.has_tree_block_info) {
    TreeBlockInfo info{};
    info.key.set(rec.tree_block_key);
    info.level = rec.level;
    put(&info, sizeof info);
  }
  for (const ExtentRef& r : rec.inline_refs) {
    out.push_back(r.type);
    switch (r.type) {
      case KeyType::EXTENT_DATA_REF: {
        ExtentDataRef d{};
        d.root.set(r.root);
        d.objectid.set(r.objectid);
        d.offset.set(r.offset);
        d.count.set(r.count);
        put(&d, sizeof d);
        break;
      }
      case KeyType::SHARED_DATA_REF: {
        put64(r.parent);
        u8 b[4];
        store_le<u32>(b, r.count);
        put(b, 4);
        break;
      }
      case KeyType::SHARED_BLOCK_REF:
        put64(r.parent);
        break;
      default:  // TREE_BLOCK_REF, EXTENT_OWNER_REF
        put64(r.root);
        break;
    }
  }
  return out;
}

Status store_extent_item(std::span<u8> data, const ExtentRecord& rec) {
  std::vector<u8> bytes = encode_extent_item(rec);
  if (bytes.size() != data.size())
    return make_error(Errc::corrupt, "extent item of " + std::to_string(data.size()) + " bytes, the record needs " +
                                         std::to_string(bytes.size()));
  std::memcpy(data.data(), bytes.data(), bytes.size());
  return {};
}

Key tree_block_extent_key(u64 bytenr, u8 level, u32 nodesize, bool skinny) {
  return skinny ? Key{bytenr, KeyType::METADATA_ITEM, level} : Key{bytenr, KeyType::EXTENT_ITEM, nodesize};
}

u32 tree_block_extent_item_size(bool skinny) {
  return static_cast<u32>(sizeof(ExtentItem) + (skinny ? 0 : sizeof(TreeBlockInfo)) + 1 + sizeof(le64));
}

ExtentRecord new_tree_block_extent(u64 generation, u8 level, u64 root, bool skinny, const Key& first_key, u64 parent) {
  ExtentRecord rec;
  rec.refs = 1;
  rec.generation = generation;
  rec.flags = EXTENT_FLAG_TREE_BLOCK | (parent ? BLOCK_FLAG_FULL_BACKREF : 0);
  rec.level = level;
  if (!skinny) {
    rec.has_tree_block_info = true;
    rec.tree_block_key = first_key;
  }
  ExtentRef ref;
  if (parent) {
    ref.type = KeyType::SHARED_BLOCK_REF;
    ref.parent = parent;
  } else {
    ref.type = KeyType::TREE_BLOCK_REF;
    ref.root = root;
  }
  rec.inline_refs.push_back(ref);
  return rec;
}

u64 inline_ref_seq(const ExtentRef& ref) {
  switch (ref.type) {
    case KeyType::EXTENT_DATA_REF:
      return hash_extent_data_ref(ref.root, ref.objectid, ref.offset);
    case KeyType::SHARED_BLOCK_REF:
    case KeyType::SHARED_DATA_REF:
      return ref.parent;
    default:
      return ref.root;
  }
}

void sort_inline_refs(std::vector<ExtentRef>& refs) {
  std::stable_sort(refs.begin(), refs.end(), [](const ExtentRef& a, const ExtentRef& b) {
    if (a.type != b.type) return a.type < b.type;
    return inline_ref_seq(a) > inline_ref_seq(b);
  });
}

std::optional<u64> extent_owner_root(const ExtentRecord& rec) {
  if (rec.inline_refs.empty() || rec.inline_refs.front().type != KeyType::EXTENT_OWNER_REF) return std::nullopt;
  return rec.inline_refs.front().root;
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
