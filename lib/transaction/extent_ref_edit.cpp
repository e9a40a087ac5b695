// SPDX-License-Identifier: GPL-2.0-only
// Editing extent references (extent_ref_edit.h).
#include "lib/transaction/extent_ref_edit.h"

#include <algorithm>
#include <cstring>

#include "lib/ctree/search.h"
#include "lib/ctree/tree_block_extent.h"
#include "lib/ctree/write.h"
#include "lib/format/extent_backref.h"
#include "lib/transaction/data_extent_free.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

namespace {

std::string describe(const ExtentTarget& e) {
  return e.tree_block ? "tree block " + std::to_string(e.bytenr) + " (level " + std::to_string(e.level) + ")"
                      : "data extent " + std::to_string(e.bytenr) + " (" + std::to_string(e.num_bytes) + " bytes)";
}

std::string ref_name(const ExtentRef& r) {
  switch (r.type) {
    case KeyType::TREE_BLOCK_REF: return "TREE_BLOCK_REF of root " + std::to_string(r.root);
    case KeyType::SHARED_BLOCK_REF: return "SHARED_BLOCK_REF of parent " + std::to_string(r.parent);
    case KeyType::EXTENT_DATA_REF:
      return "EXTENT_DATA_REF of root " + std::to_string(r.root) + " inode " + std::to_string(r.objectid) + " offset " +
             std::to_string(r.offset);
    default: return "SHARED_DATA_REF of parent " + std::to_string(r.parent);
  }
}

/// Whether `have` (an inline or keyed ref) is the reference `want` names.
bool same_ref(const ExtentRef& have, const ExtentRef& want) {
  if (have.type != want.type) return false;
  switch (want.type) {
    case KeyType::TREE_BLOCK_REF: return have.root == want.root;
    case KeyType::EXTENT_DATA_REF: return have.root == want.root && have.objectid == want.objectid && have.offset == want.offset;
    default: return have.parent == want.parent;  // SHARED_BLOCK_REF, SHARED_DATA_REF
  }
}

bool is_data_ref(u8 type) { return type == KeyType::EXTENT_DATA_REF || type == KeyType::SHARED_DATA_REF; }

/// Finds the extent item of `e` for writing; nullopt when it has none.
Result<std::optional<Key>> find_item_for_write(Transaction& t, ctree::WriteRoot& ext, const ExtentTarget& e, ctree::Path& p) {
  if (e.tree_block) return ctree::find_tree_block_extent_for_write(t, ext, e.bytenr, e.level, p);
  Key k{e.bytenr, KeyType::EXTENT_ITEM, e.num_bytes};
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, ext, k, 0, p));
  if (!exact) return std::optional<Key>{};
  return std::optional<Key>(k);
}

/// Finds the keyed backref item of `ref` after extent `bytenr` (read-only
/// search); EXTENT_DATA_REF items are keyed by a hash that may collide, so
/// the items from the hash on are compared by content (kernel
/// lookup_extent_data_ref). Returns its key, or nullopt.
Result<std::optional<Key>> find_keyed(Transaction& t, const ctree::RootRef& ext, u64 bytenr, const ExtentRef& ref) {
  Key k = encode_keyed_backref(bytenr, ref).key;
  ctree::Path p;
  FSCTL_TRY(ctree::search_slot(t, ext, k, p));
  for (;;) {
    FSCTL_TRY_ASSIGN(bool has, ctree::normalize(t, p));
    if (!has) return std::optional<Key>{};
    Key at = p.key();
    if (at.objectid != bytenr || at.type != ref.type) return std::optional<Key>{};
    if (ref.type != KeyType::EXTENT_DATA_REF && at != k) return std::optional<Key>{};
    FSCTL_TRY_ASSIGN(ExtentRef have, with_context(decode_keyed_backref(at, p.item_data()), "extent tree"));
    if (same_ref(have, ref)) return std::optional<Key>(at);
    if (ref.type != KeyType::EXTENT_DATA_REF) return std::optional<Key>{};
    p.slots[0]++;
  }
}

/// Drops one count of the keyed backref `key` (deleted at its last).
Status drop_keyed(Transaction& t, ctree::WriteRoot& ext, const Key& key) {
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, ext, key, 0, p));
  if (!exact) return make_error(Errc::corrupt, "keyed backref " + key_to_string(key) + " vanished");
  FSCTL_TRY_ASSIGN(ExtentRef have, with_context(decode_keyed_backref(key, p.item_data()), "extent tree"));
  if (is_data_ref(have.type) && have.count > 1) {
    have.count--;
    KeyedBackrefItem item = encode_keyed_backref(key.objectid, have);
    auto d = ctree::item_data_mut(t, p);
    if (item.data.size() != d.size()) return make_error(Errc::corrupt, "keyed backref " + key_to_string(key) + " has a wrong size");
    std::memcpy(d.data(), item.data.data(), d.size());
    return {};
  }
  return ctree::delete_item(t, ext, p);
}

/// Writes `rec` over the item at `p`, shrinking it when it lost an inline ref.
Status rewrite_item(Transaction& t, ctree::Path& p, const ExtentRecord& rec) {
  std::vector<u8> bytes = encode_extent_item(rec);
  auto d = ctree::item_data_mut(t, p);
  if (bytes.size() > d.size()) return make_error(Errc::corrupt, "extent item grew while a reference was dropped");
  std::memcpy(d.data(), bytes.data(), bytes.size());
  if (bytes.size() == d.size()) return {};
  return ctree::resize_item(t, p, static_cast<u32>(bytes.size()));
}

Status free_extent(Transaction& t, const ExtentTarget& e) {
  if (e.tree_block) return t.release_block_space(e.bytenr);
  return free_data_extent(t, e.bytenr, e.num_bytes);
}

/// Size in an extent item of inline ref `r` (type byte included; kernel
/// btrfs_extent_inline_ref_size).
u32 inline_ref_size(const ExtentRef& r) {
  switch (r.type) {
    case KeyType::EXTENT_DATA_REF: return 1 + 28;
    case KeyType::SHARED_DATA_REF: return 1 + 8 + 4;
    default: return 1 + 8;
  }
}

/// Whether any keyed backref item follows extent item `key` (the kernel
/// adds no inline ref then: lookup_inline_extent_backref).
Result<bool> has_keyed_items(Transaction& t, const ctree::RootRef& ext, const Key& key) {
  ctree::Path p;
  FSCTL_TRY(ctree::search_slot(t, ext, key, p));
  FSCTL_TRY_ASSIGN(bool has, ctree::next_item(t, p));
  if (!has) return false;
  Key next = p.key();
  return next.objectid == key.objectid && next.type < KeyType::BLOCK_GROUP_ITEM;
}

}  // namespace

u32 max_extent_item_size(u32 nodesize) {
  return (leaf_data_size(nodesize) >> 4) - static_cast<u32>(sizeof(Item));
}

Status add_extent_ref(Transaction& t, const ExtentTarget& e, const ExtentRef& ref) {
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  ctree::Path p;
  FSCTL_TRY_ASSIGN(auto key, find_item_for_write(t, *ext, e, p));
  if (!key) return make_error(Errc::corrupt, describe(e) + " has no extent item");
  FSCTL_TRY_ASSIGN(ExtentRecord rec, with_context(decode_extent_item(*key, p.item_data()), "extent item " + key_to_string(*key)));
  rec.refs++;
  auto it = std::find_if(rec.inline_refs.begin(), rec.inline_refs.end(), [&](const ExtentRef& r) { return same_ref(r, ref); });
  if (it != rec.inline_refs.end() && is_data_ref(ref.type)) {
    it->count++;
    return with_context(store_extent_item(ctree::item_data_mut(t, p), rec), describe(e));
  }
  const u32 size = static_cast<u32>(p.item_data().size());
  if (it == rec.inline_refs.end() && size + inline_ref_size(ref) < max_extent_item_size(t.nodesize())) {
    FSCTL_TRY_ASSIGN(bool keyed, has_keyed_items(t, ext->ref(), *key));
    if (!keyed) {
      ExtentRef add = ref;
      if (is_data_ref(add.type)) add.count = 1;
      rec.inline_refs.push_back(add);
      sort_inline_refs(rec.inline_refs);
      std::vector<u8> bytes = encode_extent_item(rec);
      // Grow the item where it is (the leaf split first when it lacks room).
      p.release();
      ctree::Path w;
      FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *ext, *key, static_cast<u32>(bytes.size()) - size, w));
      if (!exact) return make_error(Errc::corrupt, describe(e) + " lost its extent item");
      FSCTL_TRY(ctree::resize_item(t, w, static_cast<u32>(bytes.size())));
      auto d = ctree::item_data_mut(t, w);
      std::memcpy(d.data(), bytes.data(), bytes.size());
      return {};
    }
  }
  // A keyed backref: the item's refs, then the keyed item (its count up, or new).
  FSCTL_TRY(with_context(store_extent_item(ctree::item_data_mut(t, p), rec), describe(e)));
  p.release();
  FSCTL_TRY_ASSIGN(auto keyed, find_keyed(t, ext->ref(), e.bytenr, ref));
  if (keyed) {
    if (!is_data_ref(ref.type)) return make_error(Errc::corrupt, describe(e) + " already has " + ref_name(ref));
    ctree::Path q;
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *ext, *keyed, 0, q));
    if (!exact) return make_error(Errc::corrupt, "keyed backref " + key_to_string(*keyed) + " vanished");
    FSCTL_TRY_ASSIGN(ExtentRef have, with_context(decode_keyed_backref(*keyed, q.item_data()), "extent tree"));
    have.count++;
    KeyedBackrefItem item = encode_keyed_backref(e.bytenr, have);
    auto d = ctree::item_data_mut(t, q);
    std::memcpy(d.data(), item.data.data(), std::min(d.size(), item.data.size()));
    return {};
  }
  ExtentRef add = ref;
  if (is_data_ref(add.type)) add.count = 1;
  KeyedBackrefItem item = encode_keyed_backref(e.bytenr, add);
  if (add.type == KeyType::EXTENT_DATA_REF) {
    // Hash collisions: the next free offset after the hash (kernel
    // insert_extent_data_ref).
    for (;;) {
      FSCTL_TRY_ASSIGN(auto taken, ctree::lookup_item(t, ext->ref(), item.key));
      if (!taken) break;
      item.key.offset++;
    }
  }
  return ctree::insert_item(t, *ext, item.key, item.data);
}

Status set_extent_flags(Transaction& t, const ExtentTarget& e, u64 flags) {
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  ctree::Path p;
  FSCTL_TRY_ASSIGN(auto key, find_item_for_write(t, *ext, e, p));
  if (!key) return make_error(Errc::corrupt, describe(e) + " has no extent item");
  FSCTL_TRY_ASSIGN(ExtentRecord rec, with_context(decode_extent_item(*key, p.item_data()), "extent item " + key_to_string(*key)));
  if ((rec.flags & flags) == flags) return {};
  rec.flags |= flags;
  return with_context(store_extent_item(ctree::item_data_mut(t, p), rec), describe(e));
}

Result<ExtentInfo> tree_block_info(Transaction& t, u64 bytenr, u8 level) {
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  FSCTL_TRY_ASSIGN(auto found, ctree::read_tree_block_extent(t, ext->ref(), bytenr, level, t.nodesize()));
  if (!found)
    return make_error(Errc::corrupt, "tree block " + std::to_string(bytenr) + " (level " + std::to_string(level) + ") has no extent item");
  if (found->rec.refs == 0) return make_error(Errc::corrupt, "tree block " + std::to_string(bytenr) + " has an extent item with refs 0");
  return ExtentInfo{found->rec.refs, found->rec.flags};
}

Result<bool> extent_ref_exists(Transaction& t, const ExtentTarget& e, const ExtentRef& ref) {
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  ctree::Path p;
  std::optional<Key> key;
  if (e.tree_block) {
    FSCTL_TRY_ASSIGN(key, ctree::find_tree_block_extent(t, ext->ref(), e.bytenr, e.level, t.nodesize(), p));
  } else {
    Key k{e.bytenr, KeyType::EXTENT_ITEM, e.num_bytes};
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot(t, ext->ref(), k, p));
    if (exact) key = k;
  }
  if (!key) return false;
  FSCTL_TRY_ASSIGN(ExtentRecord rec, with_context(decode_extent_item(*key, p.item_data()), "extent item " + key_to_string(*key)));
  if (std::any_of(rec.inline_refs.begin(), rec.inline_refs.end(), [&](const ExtentRef& r) { return same_ref(r, ref); })) return true;
  FSCTL_TRY_ASSIGN(auto keyed, find_keyed(t, ext->ref(), e.bytenr, ref));
  return keyed.has_value();
}

Result<RefDropped> drop_extent_ref(Transaction& t, const ExtentTarget& e, const ExtentRef& ref) {
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  // An inline ref first: one edit of the extent item.
  ctree::Path p;
  FSCTL_TRY_ASSIGN(auto key, find_item_for_write(t, *ext, e, p));
  if (!key) return make_error(Errc::corrupt, describe(e) + " has no extent item");
  FSCTL_TRY_ASSIGN(ExtentRecord rec, with_context(decode_extent_item(*key, p.item_data()), "extent item " + key_to_string(*key)));
  if (rec.refs == 0) return make_error(Errc::corrupt, describe(e) + " has an extent item with refs 0");
  auto it = std::find_if(rec.inline_refs.begin(), rec.inline_refs.end(), [&](const ExtentRef& r) { return same_ref(r, ref); });
  if (it == rec.inline_refs.end()) {
    // A keyed backref: its count first, then the item's refs.
    p.release();
    FSCTL_TRY_ASSIGN(auto keyed, find_keyed(t, ext->ref(), e.bytenr, ref));
    if (!keyed) return make_error(Errc::corrupt, describe(e) + " has no " + ref_name(ref));
    FSCTL_TRY(drop_keyed(t, *ext, *keyed));
    FSCTL_TRY_ASSIGN(key, find_item_for_write(t, *ext, e, p));
    if (!key) return make_error(Errc::corrupt, describe(e) + " lost its extent item");
    FSCTL_TRY_ASSIGN(rec, with_context(decode_extent_item(*key, p.item_data()), "extent item " + key_to_string(*key)));
  } else if (is_data_ref(it->type) && it->count > 1) {
    it->count--;
  } else {
    rec.inline_refs.erase(it);
  }
  rec.refs--;
  RefDropped out{rec.refs, rec.refs == 0};
  if (rec.refs > 0) {
    FSCTL_TRY(with_context(rewrite_item(t, p, rec), describe(e)));
    return out;
  }
  FSCTL_TRY(ctree::delete_item(t, *ext, p));
  FSCTL_TRY(free_extent(t, e));
  return out;
}

}  // namespace fsctl::transaction
