// SPDX-License-Identifier: GPL-2.0-only
// Tree block layout: struct btrfs_header, btrfs_item, btrfs_key_ptr (kernel
// btrfs_tree.h) and NodeView, a typed read view over a block that the tree
// checker (lib/ctree/tree_checker.h) has verified.
#pragma once
#include <cstddef>
#include <span>

#include "lib/base/ints.h"
#include "lib/format/key.h"
#include "lib/format/le.h"

namespace fsctl::format {

inline constexpr std::size_t CSUM_SIZE_MAX = 32;  // BTRFS_CSUM_SIZE
inline constexpr std::size_t FSID_SIZE = 16;      // BTRFS_FSID_SIZE
inline constexpr std::size_t UUID_SIZE = 16;      // BTRFS_UUID_SIZE
inline constexpr int MAX_LEVEL = 8;               // BTRFS_MAX_LEVEL
inline constexpr u64 HEADER_FLAG_WRITTEN = 1ULL << 0, HEADER_FLAG_RELOC = 1ULL << 1;
inline constexpr int BACKREF_REV_SHIFT = 56;
inline constexpr u64 MIXED_BACKREF_REV = 1;

/// struct btrfs_header (101 bytes).
struct Header {
  u8 csum[CSUM_SIZE_MAX];
  u8 fsid[FSID_SIZE];
  le64 bytenr;
  le64 flags;
  u8 chunk_tree_uuid[UUID_SIZE];
  le64 generation;
  le64 owner;
  le32 nritems;
  u8 level;
};
static_assert(sizeof(Header) == 101);
static_assert(offsetof(Header, bytenr) == 48 && offsetof(Header, generation) == 80 && offsetof(Header, level) == 100);

/// struct btrfs_item (25 bytes): key, data offset (from the end of the header), size.
struct Item {
  DiskKey key;
  le32 offset;
  le32 size;
};
static_assert(sizeof(Item) == 25);

/// struct btrfs_key_ptr (33 bytes): key, child bytenr (logical), child generation.
struct KeyPtr {
  DiskKey key;
  le64 blockptr;
  le64 generation;
};
static_assert(sizeof(KeyPtr) == 33);

/// Number of item slots that fit a leaf / key pointers that fit a node of `nodesize` bytes.
[[nodiscard]] constexpr u32 leaf_data_size(u32 nodesize) { return nodesize - static_cast<u32>(sizeof(Header)); }
[[nodiscard]] constexpr u32 node_max_ptrs(u32 nodesize) { return leaf_data_size(nodesize) / static_cast<u32>(sizeof(KeyPtr)); }

/// Read view over one tree block of `nodesize` bytes.
/// REQUIRES (for slot accessors): the block passed tree_checker's
/// check_node_layout, so every slot < nritems() and every item range is in
/// bounds. Views do not own the bytes.
class NodeView {
 public:
  explicit NodeView(std::span<const u8> block) : b_(block) {}
  [[nodiscard]] const Header& header() const { return *reinterpret_cast<const Header*>(b_.data()); }
  [[nodiscard]] u64 bytenr() const { return header().bytenr.get(); }
  [[nodiscard]] u64 flags() const { return header().flags.get(); }
  [[nodiscard]] u64 generation() const { return header().generation.get(); }
  [[nodiscard]] u64 owner() const { return header().owner.get(); }
  [[nodiscard]] u32 nritems() const { return header().nritems.get(); }
  [[nodiscard]] u8 level() const { return header().level; }
  [[nodiscard]] bool is_leaf() const { return level() == 0; }
  /// The header's fsid and chunk tree uuid (16 bytes each).
  [[nodiscard]] std::span<const u8, FSID_SIZE> fsid() const { return std::span<const u8, FSID_SIZE>(header().fsid, FSID_SIZE); }
  [[nodiscard]] std::span<const u8, UUID_SIZE> chunk_tree_uuid() const {
    return std::span<const u8, UUID_SIZE>(header().chunk_tree_uuid, UUID_SIZE);
  }
  [[nodiscard]] std::span<const u8> bytes() const { return b_; }

  // Leaf accessors.
  [[nodiscard]] const Item& item(u32 slot) const {
    return reinterpret_cast<const Item*>(b_.data() + sizeof(Header))[slot];
  }
  [[nodiscard]] Key item_key(u32 slot) const { return item(slot).key.to_cpu(); }
  [[nodiscard]] u8 item_type_at(u32 slot) const { return item(slot).key.type; }
  [[nodiscard]] u32 item_offset(u32 slot) const { return item(slot).offset.get(); }
  [[nodiscard]] u32 item_size(u32 slot) const { return item(slot).size.get(); }
  /// The item's data bytes (btrfs_item_ptr_offset = header size + item offset).
  [[nodiscard]] std::span<const u8> item_data(u32 slot) const {
    return b_.subspan(sizeof(Header) + item_offset(slot), item_size(slot));
  }

  // Node accessors.
  [[nodiscard]] const KeyPtr& key_ptr(u32 slot) const {
    return reinterpret_cast<const KeyPtr*>(b_.data() + sizeof(Header))[slot];
  }
  [[nodiscard]] Key node_key(u32 slot) const { return key_ptr(slot).key.to_cpu(); }
  [[nodiscard]] u64 blockptr(u32 slot) const { return key_ptr(slot).blockptr.get(); }
  [[nodiscard]] u64 ptr_generation(u32 slot) const { return key_ptr(slot).generation.get(); }

  /// Key at slot for either kind of block.
  [[nodiscard]] Key key(u32 slot) const { return is_leaf() ? item_key(slot) : node_key(slot); }

  /// Free bytes of a leaf: data area minus item headers and item data
  /// (kernel btrfs_leaf_free_space). REQUIRES: leaf.
  [[nodiscard]] u32 leaf_free_space() const {
    u32 n = nritems();
    u32 low = n ? item_offset(n - 1) : static_cast<u32>(b_.size() - sizeof(Header));
    return low - n * static_cast<u32>(sizeof(Item));
  }
  /// Bytes items [from, to) of a leaf take: their data plus their item
  /// headers (kernel leaf_space_used). REQUIRES: leaf, from <= to <= nritems.
  [[nodiscard]] u32 leaf_space_used(u32 from, u32 to) const {
    if (from >= to) return 0;
    u32 top = from == 0 ? static_cast<u32>(b_.size() - sizeof(Header)) : item_offset(from - 1);
    return top - item_offset(to - 1) + (to - from) * static_cast<u32>(sizeof(Item));
  }

 private:
  std::span<const u8> b_;
};

/// Mutable view over a tree block being built or modified in a transaction.
/// Provides the primitive, bounds-respecting moves of items and key pointers
/// (kernel ctree.c setup_items_for_insert / btrfs_del_items / insert_ptr /
/// del_ptr). REQUIRES: the block is nodesize bytes and its layout is valid.
class NodeMut {
 public:
  NodeMut(std::span<u8> block, u32 nodesize) : b_(block), ns_(nodesize) {}
  [[nodiscard]] Header& header() { return *reinterpret_cast<Header*>(b_.data()); }
  [[nodiscard]] NodeView view() const { return NodeView(b_); }
  [[nodiscard]] u32 nodesize() const { return ns_; }
  [[nodiscard]] u32 nritems() const { return view().nritems(); }
  void set_nritems(u32 n) { header().nritems.set(n); }
  [[nodiscard]] Item& item(u32 slot) { return reinterpret_cast<Item*>(b_.data() + sizeof(Header))[slot]; }
  [[nodiscard]] KeyPtr& key_ptr(u32 slot) { return reinterpret_cast<KeyPtr*>(b_.data() + sizeof(Header))[slot]; }
  /// Leaf data area (offsets in Item are relative to its start).
  [[nodiscard]] u8* leaf_data() { return b_.data() + sizeof(Header); }
  [[nodiscard]] std::span<u8> item_data(u32 slot) {
    return b_.subspan(sizeof(Header) + item(slot).offset.get(), item(slot).size.get());
  }
  /// Free bytes of a leaf: data area minus item headers and item data.
  [[nodiscard]] u32 leaf_free_space() const { return view().leaf_free_space(); }
  /// Opens a zeroed item of `size` bytes with `key` at `slot`.
  /// REQUIRES: leaf, slot <= nritems, leaf_free_space() >= size + sizeof(Item).
  void leaf_insert(u32 slot, const Key& key, u32 size);
  /// Removes `count` items starting at `slot`. REQUIRES: leaf, in range.
  void leaf_delete(u32 slot, u32 count = 1);
  /// Grows or shrinks item `slot` at its end to `new_size` (data kept up to the
  /// smaller size, new bytes zeroed). REQUIRES: leaf; growing needs free space.
  void leaf_resize(u32 slot, u32 new_size);
  /// Inserts a key pointer at `slot`. REQUIRES: node, nritems < node_max_ptrs.
  void node_insert(u32 slot, const Key& key, u64 blockptr, u64 generation);
  /// Removes the key pointer at `slot`. REQUIRES: node, slot < nritems.
  void node_delete(u32 slot);
  /// Sets the key at `slot` (either kind of block).
  void set_key(u32 slot, const Key& key);

 private:
  std::span<u8> b_;
  u32 ns_;
};

// Moves between two sibling blocks (kernel ctree.c __push_leaf_left,
// __push_leaf_right, push_node_left, balance_node_right): `left` holds the
// smaller keys. Item data stays packed from the end of each leaf in slot
// order, so every moved or remaining item gets a new offset. Keys and
// headers of the blocks are not checked; the callers keep key order (the
// blocks are neighbours) and fix the parent's keys.

/// Moves the first `count` items of leaf `right` to the end of leaf `left`.
/// REQUIRES: both leaves of this nodesize, count <= right's nritems, and
/// left.leaf_free_space() >= right.view().leaf_space_used(0, count).
void leaf_move_to_left(NodeMut& left, NodeMut& right, u32 count);
/// Moves the last `count` items of leaf `left` to the start of leaf `right`.
/// REQUIRES: count <= left's nritems, right.leaf_free_space() >= the bytes moved.
void leaf_move_to_right(NodeMut& left, NodeMut& right, u32 count);
/// Moves the first `count` key pointers of node `right` to the end of `left`.
/// REQUIRES: count <= right's nritems, left's nritems + count <= node_max_ptrs.
void node_move_to_left(NodeMut& left, NodeMut& right, u32 count);
/// Moves the last `count` key pointers of node `left` to the start of `right`.
/// REQUIRES: count <= left's nritems, right's nritems + count <= node_max_ptrs.
void node_move_to_right(NodeMut& left, NodeMut& right, u32 count);

}  // namespace fsctl::format
