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
  std::vector<u64> inline_olds;
  for (auto& r : rec.inline_refs) {
    if (r.type != type) continue;
    auto it = std::lower_bound(parents.begin(), parents.end(), std::pair<u64, u64>{r.parent, 0});
    if (it == parents.end() || it->first != r.parent) continue;
    inline_olds.push_back(r.parent);
    r.parent = it->second;
  }
  if (!inline_olds.empty()) {
    sort_inline_refs(rec.inline_refs);
    // Same refs, some parents changed: the item keeps its size.
    FSCTL_TRY(with_context(store_extent_item(ctree::item_data_mut(t, p), rec), "extent item " + key_to_string(key)));
  }
  if (inline_olds.size() == parents.size()) return {};
  p.release();
  std::sort(inline_olds.begin(), inline_olds.end());
  for (auto [old_parent, new_parent] : parents) {
    if (std::binary_search(inline_olds.begin(), inline_olds.end(), old_parent)) continue;
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
