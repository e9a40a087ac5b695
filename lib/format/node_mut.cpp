// SPDX-License-Identifier: GPL-2.0-only
// Primitive edits of a leaf or node in memory, and moves of items or key
// pointers between two siblings (the copy part of kernel ctree.c's pushes).
// Leaf item data is packed from the end of the block backward in slot order
// (item 0 highest), so inserting, deleting or moving items moves the data of
// the later items and their offsets.
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

namespace fsctl::format {

// Item data of a leaf lies in [item_offset(n - 1), leaf_data_size): item 0
// at the top. A block of items [a, b) occupies [item_offset(b - 1),
// a ? item_offset(a - 1) : leaf_data_size).

void leaf_move_to_left(NodeMut& left, NodeMut& right, u32 count) {
  if (count == 0) return;
  u32 data_size = leaf_data_size(left.nodesize());
  u32 nl = left.nritems(), nr = right.nritems();
  u32 left_end = nl ? left.item(nl - 1).offset.get() : data_size;  // lowest data byte of left
  u32 moved_low = right.item(count - 1).offset.get();
  u32 moved = data_size - moved_low;  // data bytes of right's items [0, count)
  // Data: right [moved_low, data_size) -> left [left_end - moved, left_end).
  std::memcpy(left.leaf_data() + left_end - moved, right.leaf_data() + moved_low, moved);
  u32 shift = data_size - left_end;  // every moved offset goes down by this
  for (u32 i = 0; i < count; ++i) {
    Item& it = left.item(nl + i);
    it = right.item(i);
    it.offset.set(it.offset.get() - shift);
  }
  left.set_nritems(nl + count);
  // Right: the remaining items' data moves up to the end of the block.
  if (count < nr) {
    u32 low = right.item(nr - 1).offset.get();
    std::memmove(right.leaf_data() + low + moved, right.leaf_data() + low, moved_low - low);
    for (u32 i = count; i < nr; ++i) right.item(i).offset.set(right.item(i).offset.get() + moved);
    std::memmove(&right.item(0), &right.item(count), (nr - count) * sizeof(Item));
  }
  right.set_nritems(nr - count);
}

void leaf_move_to_right(NodeMut& left, NodeMut& right, u32 count) {
  if (count == 0) return;
  u32 data_size = leaf_data_size(left.nodesize());
  u32 nl = left.nritems(), nr = right.nritems();
  u32 first = nl - count;  // first moved slot of left
  u32 top = first ? left.item(first - 1).offset.get() : data_size;
  u32 low = left.item(nl - 1).offset.get();
  u32 moved = top - low;
  // Right: its items' data moves down by `moved`, headers up by `count`.
  if (nr) {
    u32 rlow = right.item(nr - 1).offset.get();
    std::memmove(right.leaf_data() + rlow - moved, right.leaf_data() + rlow, data_size - rlow);
    for (u32 i = 0; i < nr; ++i) right.item(i).offset.set(right.item(i).offset.get() - moved);
    std::memmove(&right.item(count), &right.item(0), nr * sizeof(Item));
  }
  std::memcpy(right.leaf_data() + data_size - moved, left.leaf_data() + low, moved);
  u32 shift = data_size - top;  // every moved offset goes up by this
  for (u32 i = 0; i < count; ++i) {
    Item& it = right.item(i);
    it = left.item(first + i);
    it.offset.set(it.offset.get() + shift);
  }
  right.set_nritems(nr + count);
  left.set_nritems(first);
}

void node_move_to_left(NodeMut& left, NodeMut& right, u32 count) {
  if (count == 0) return;
  u32 nl = left.nritems(), nr = right.nritems();
  std::memcpy(&left.key_ptr(nl), &right.key_ptr(0), count * sizeof(KeyPtr));
  if (count < nr) std::memmove(&right.key_ptr(0), &right.key_ptr(count), (nr - count) * sizeof(KeyPtr));
  left.set_nritems(nl + count);
  right.set_nritems(nr - count);
}

void node_move_to_right(NodeMut& left, NodeMut& right, u32 count) {
  if (count == 0) return;
  u32 nl = left.nritems(), nr = right.nritems();
  if (nr) std::memmove(&right.key_ptr(count), &right.key_ptr(0), nr * sizeof(KeyPtr));
  std::memcpy(&right.key_ptr(0), &left.key_ptr(nl - count), count * sizeof(KeyPtr));
  left.set_nritems(nl - count);
  right.set_nritems(nr + count);
}

}  // namespace fsctl::format
