// SPDX-License-Identifier: GPL-2.0-only
// Remapping the full backrefs of relocated tree blocks (block_backrefs.h;
// DESIGN.md "Relocation for `balance -m`").
#include "lib/relocation/block_backrefs.h"

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/extent_backref.h"
#include "lib/format/names.h"

namespace fsctl::relocation {
using namespace fsctl::format;
using transaction::Transaction;

Status remap_full_backref(Transaction& t, ctree::WriteRoot& ext, const Key& key, u8 type, u64 old_parent, u64 new_parent) {
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, ext, key, 0, p));
  if (!exact) return make_error(Errc::corrupt, "no extent item " + key_to_string(key) + " for a block relocated from " + std::to_string(old_parent));
  FSCTL_TRY_ASSIGN(auto rec, decode_extent_item(key, p.item_data()));
  for (auto& r : rec.inline_refs) {
    if (r.type != type || r.parent != old_parent) continue;
    r.parent = new_parent;
    sort_inline_refs(rec.inline_refs);
    // Same refs, one parent changed: the item keeps its size.
    return with_context(store_extent_item(ctree::item_data_mut(t, p), rec), "extent item " + key_to_string(key));
  }
  Key keyed{key.objectid, type, old_parent};
  ctree::Path q;
  FSCTL_TRY_ASSIGN(bool found, ctree::search_slot_for_write(t, ext, keyed, 0, q));
  if (!found)
    return make_error(Errc::corrupt, "extent " + key_to_string(key) + " has no " + key_type_name(type) + " to parent " +
                                         std::to_string(old_parent) + ", whose extent item says FULL_BACKREF");
  FSCTL_TRY_ASSIGN(ExtentRef ref, with_context(decode_keyed_backref(keyed, q.item_data()), "extent tree"));
  ref.parent = new_parent;
  KeyedBackrefItem moved = encode_keyed_backref(key.objectid, ref);
  FSCTL_TRY(ctree::delete_item(t, ext, q));
  return ctree::insert_item(t, ext, moved.key, moved.data);
}

}  // namespace fsctl::relocation
