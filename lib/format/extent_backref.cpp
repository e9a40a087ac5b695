// SPDX-License-Identifier: GPL-2.0-only
// Keyed extent backref codec (kernel btrfs_tree.h struct btrfs_extent_data_ref,
// btrfs_shared_data_ref; tree-checker.c check_simple_keyed_refs).
#include "lib/format/extent_backref.h"

#include "lib/base/assert.h"
#include "lib/format/item_bytes.h"
#include "lib/format/items.h"
#include "lib/format/names.h"

namespace fsctl::format {

bool is_keyed_backref(u8 type) {
  return type == KeyType::TREE_BLOCK_REF || type == KeyType::SHARED_BLOCK_REF || type == KeyType::EXTENT_DATA_REF ||
         type == KeyType::SHARED_DATA_REF;
}

Result<ExtentRef> decode_keyed_backref(const Key& key, std::span<const u8> data) {
  ExtentRef ref;
  ref.type = key.type;
  switch (key.type) {
    case KeyType::TREE_BLOCK_REF:
      FSCTL_TRY(detail::check_size_exact(data, 0, "keyed TREE_BLOCK_REF"));
      ref.root = key.offset;
      return ref;
    case KeyType::SHARED_BLOCK_REF:
      FSCTL_TRY(detail::check_size_exact(data, 0, "keyed SHARED_BLOCK_REF"));
      ref.parent = key.offset;
      return ref;
    case KeyType::SHARED_DATA_REF: {
      FSCTL_TRY(detail::check_size_exact(data, sizeof(SharedDataRef), "keyed SHARED_DATA_REF"));
      ref.parent = key.offset;
      ref.count = detail::load_struct<SharedDataRef>(data).count.get();
      return ref;
    }
    case KeyType::EXTENT_DATA_REF: {
      FSCTL_TRY(detail::check_size_exact(data, sizeof(ExtentDataRef), "keyed EXTENT_DATA_REF"));
      auto d = detail::load_struct<ExtentDataRef>(data);
      ref.root = d.root.get();
      ref.objectid = d.objectid.get();
      ref.offset = d.offset.get();
      ref.count = d.count.get();
      return ref;
    }
    default:
      return make_error(Errc::corrupt, "key " + key_to_string(key) + " (" + key_type_name(key.type) + ") is no keyed backref");
  }
}

KeyedBackrefItem encode_keyed_backref(u64 bytenr, const ExtentRef& ref) {
  FSCTL_ASSERT(is_keyed_backref(ref.type));
  KeyedBackrefItem out;
  out.key = Key{bytenr, ref.type, 0};
  switch (ref.type) {
    case KeyType::TREE_BLOCK_REF:
      out.key.offset = ref.root;
      break;
    case KeyType::SHARED_BLOCK_REF:
      out.key.offset = ref.parent;
      break;
    case KeyType::SHARED_DATA_REF: {
      out.key.offset = ref.parent;
      SharedDataRef s{};
      s.count.set(ref.count);
      out.data = detail::struct_bytes(s);
      break;
    }
    default: {  // EXTENT_DATA_REF
      out.key.offset = hash_extent_data_ref(ref.root, ref.objectid, ref.offset);
      ExtentDataRef d{};
      d.root.set(ref.root);
      d.objectid.set(ref.objectid);
      d.offset.set(ref.offset);
      d.count.set(ref.count);
      out.data = detail::struct_bytes(d);
      break;
    }
  }
  return out;
}

}  // namespace fsctl::format
