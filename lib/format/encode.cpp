// SPDX-License-Identifier: GPL-2.0-only
#include "lib/format/encode.h"

#include <algorithm>
#include <cstring>

namespace fsctl::format {

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

std::vector<u8> encode_extent_item(const ExtentRecord& rec) {
  std::vector<u8> out(sizeof(ExtentItem));
  auto* ei = reinterpret_cast<ExtentItem*>(out.data());
  ei->refs.set(rec.refs);
  ei->generation.set(rec.generation);
  ei->flags.set(rec.flags);
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

}  // namespace fsctl::format
