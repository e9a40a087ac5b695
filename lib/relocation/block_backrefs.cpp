// SPDX-License-Identifier: GPL-2.0-only
// Remapping the full backrefs of relocated tree blocks (block_backrefs.h;
// DESIGN.md "Relocation for `balance -m`").
#include "lib/relocation/block_backrefs.h"

#include <algorithm>
#include <vector>

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/extent_backref.h"
#include "lib/format/names.h"

namespace fsctl::relocation {
using namespace fsctl::format;
using transaction::Transaction;

Status remap_full_backrefs_of(Transaction& t, ctree::WriteRoot& ext, const Key& key, u8 type,
                              std::span<const std::pair<u64, u64>> parents) {
  if (parents.empty()) return {};
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, ext, key, 0, p));
  if (!exact)
    return make_error(Errc::corrupt, "no extent item " + key_to_string(key) + " for a block relocated from " +
                                         std::to_string(parents.front().first));
  FSCTL_TRY_ASSIGN(auto rec, decode_extent_item(key, p.item_data()));
  // Old parents found inline; the others are keyed backrefs. New parents
  // are fresh allocations, never an old parent: one pass remaps each once.
  std::vector<bool> inline_found(parents.size(), false);
  std::size_t found_inline = 0;
  for (auto& r : rec.inline_refs) {
    if (r.type != type) continue;
    auto it = std::lower_bound(parents.begin(), parents.end(), std::pair<u64, u64>{r.parent, 0});
    if (it == parents.end() || it->first != r.parent) continue;
    inline_found[static_cast<std::size_t>(it - parents.begin())] = true;
    ++found_inline;
    r.parent = it->second;
  }
  if (found_inline > 0) {
    sort_inline_refs(rec.inline_refs);
    // Same refs, some parents changed: the item keeps its size.
    FSCTL_TRY(with_context(store_extent_item(ctree::item_data_mut(t, p), rec), "extent item " + key_to_string(key)));
  }
  if (found_inline == parents.size()) return {};
  p.release();
  for (std::size_t k = 0; k < parents.size(); ++k) {
    if (inline_found[k]) continue;
    auto [old_parent, new_parent] = parents[k];
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
    FSCTL_TRY(ctree::insert_item(t, ext, moved.key, moved.data));
  }
  return {};
}

}  // namespace fsctl::relocation
