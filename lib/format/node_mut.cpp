// SPDX-License-Identifier: GPL-2.0-only
// Primitive edits of a leaf or node in memory. Leaf item data is packed from
// the end of the block backward in slot order (item 0 highest), so inserting
// or deleting moves the data of the later items and their offsets.
#include <cstring>

#include "lib/format/node_layout.h"

namespace fsctl::format {

void NodeMut::leaf_insert(u32 slot, const Key& key, u32 size) {
  u32 n = nritems();
  u8* data = leaf_data();
  u32 data_end = slot == 0 ? leaf_data_size(ns_) : item(slot - 1).offset.get();
  if (slot < n) {
    u32 low = item(n - 1).offset.get();
    std::memmove(data + low - size, data + low, data_end - low);
    for (u32 i = slot; i < n; ++i) item(i).offset.set(item(i).offset.get() - size);
    std::memmove(&item(slot + 1), &item(slot), (n - slot) * sizeof(Item));
  }
  Item& it = item(slot);
  it.key.set(key);
  it.offset.set(data_end - size);
  it.size.set(size);
  std::memset(data + data_end - size, 0, size);
  set_nritems(n + 1);
}

void NodeMut::leaf_delete(u32 slot, u32 count) {
  u32 n = nritems();
  u8* data = leaf_data();
  u32 gap = 0;
  for (u32 i = slot; i < slot + count; ++i) gap += item(i).size.get();
  if (slot + count < n) {
    u32 low = item(n - 1).offset.get();
    u32 top = item(slot + count - 1).offset.get();  // end of the data that stays below the gap
    std::memmove(data + low + gap, data + low, top - low);
    for (u32 i = slot + count; i < n; ++i) item(i).offset.set(item(i).offset.get() + gap);
    std::memmove(&item(slot), &item(slot + count), (n - slot - count) * sizeof(Item));
  }
  set_nritems(n - count);
}

void NodeMut::leaf_resize(u32 slot, u32 new_size) {
  u32 n = nritems();
  u8* data = leaf_data();
  u32 old_size = item(slot).size.get();
  if (new_size == old_size) return;
  // Item data is [offset, offset+size) and later items lie below it: the
  // item and everything below move by the size change, and the bytes added
  // (or removed) are at the item's end (kernel btrfs_extend_item,
  // btrfs_truncate_item from the end).
  u32 low = item(n - 1).offset.get();
  u32 start = item(slot).offset.get();
  if (new_size > old_size) {
    u32 d = new_size - old_size;
    std::memmove(data + low - d, data + low, start + old_size - low);
    for (u32 i = slot; i < n; ++i) item(i).offset.set(item(i).offset.get() - d);
    std::memset(data + item(slot).offset.get() + old_size, 0, d);
  } else {
    u32 d = old_size - new_size;
    std::memmove(data + low + d, data + low, start + new_size - low);
    for (u32 i = slot; i < n; ++i) item(i).offset.set(item(i).offset.get() + d);
  }
  item(slot).size.set(new_size);
}

void NodeMut::node_insert(u32 slot, const Key& key, u64 blockptr, u64 generation) {
  u32 n = nritems();
  if (slot < n) std::memmove(&key_ptr(slot + 1), &key_ptr(slot), (n - slot) * sizeof(KeyPtr));
  key_ptr(slot).key.set(key);
  key_ptr(slot).blockptr.set(blockptr);
  key_ptr(slot).generation.set(generation);
  set_nritems(n + 1);
}

void NodeMut::node_delete(u32 slot) {
  u32 n = nritems();
  if (slot + 1 < n) std::memmove(&key_ptr(slot), &key_ptr(slot + 1), (n - slot - 1) * sizeof(KeyPtr));
  set_nritems(n - 1);
}

void NodeMut::set_key(u32 slot, const Key& key) {
  if (view().is_leaf())
    item(slot).key.set(key);
  else
    key_ptr(slot).key.set(key);
}

}  // namespace fsctl::format
