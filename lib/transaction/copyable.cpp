// SPDX-License-Identifier: GPL-2.0-only
// Which committed tree blocks this engine may copy and drop: an unshared
// block, whose extent item (either form: tree_block_extent.h) is exactly
// one inline TREE_BLOCK_REF of its tree (kernel: a block with other
// references needs the shared-block rules of update_ref_for_cow, which only
// relocation implements). Used by every free of a committed block and by the
// preflight of multi-commit operations (DESIGN.md invariant 6).
#include "lib/ctree/search.h"
#include "lib/ctree/tree_block_extent.h"
#include "lib/ctree/tree_walk.h"
#include "lib/format/extent_item.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

Status Transaction::check_droppable(u64 bytenr, u64 owner, u8 level) {
  FSCTL_TRY_ASSIGN(auto* ext, root(EXTENT_TREE_OBJECTID));
  ctree::Path p;
  FSCTL_TRY_ASSIGN(auto k, ctree::find_tree_block_extent(*this, ext->ref(), bytenr, level, nodesize(), p));
  std::string what = "tree block " + std::to_string(bytenr) + " (owner " + std::to_string(owner) + ", level " + std::to_string(level) + ")";
  if (!k) return make_error(Errc::corrupt, what + ": no extent item (METADATA_ITEM or EXTENT_ITEM) in the extent tree");
  FSCTL_TRY_ASSIGN(auto rec, with_context(decode_extent_item(*k, p.item_data()), what + ": extent item " + key_to_string(*k)));
  if (rec.refs != 1 || (rec.flags & BLOCK_FLAG_FULL_BACKREF) || rec.inline_refs.size() != 1 ||
      rec.inline_refs[0].type != KeyType::TREE_BLOCK_REF || rec.inline_refs[0].root != owner)
    return make_error(Errc::unsupported, what + " is shared or has other references (refs " + std::to_string(rec.refs) +
                                             "); modifying shared trees is not supported");
  FSCTL_TRY_ASSIGN(bool more, ctree::next_item(*this, p));
  // Keyed refs (TREE_BLOCK_REF 176 .. SHARED_DATA_REF 184) follow the
  // extent item; a BLOCK_GROUP_ITEM may share the objectid and is no ref.
  if (more && p.key().objectid == bytenr && p.key().type >= KeyType::TREE_BLOCK_REF && p.key().type <= KeyType::SHARED_DATA_REF)
    return make_error(Errc::unsupported, what + " has keyed back references; modifying shared trees is not supported");
  return {};
}

Status Transaction::check_copyable(u64 root_id, const std::vector<Key>* keys) {
  auto r = fs_.find_root(root_id);
  if (!r) return {};
  std::set<u64> seen;
  auto check = [&](const cache::TreeBlockRef& b) -> Status {
    if (!seen.insert(b->bytenr).second) return {};
    return check_droppable(b->bytenr, root_id, b->view().level());
  };
  if (!keys) {
    ctree::RootSets sets;
    return ctree::walk_trees(*this, {*r}, sets, [&](const cache::TreeBlockRef& b, u32) { return check(b); });
  }
  for (const Key& k : *keys) {
    ctree::Path p;
    FSCTL_TRY(ctree::search_slot(*this, *r, k, p));
    for (auto& n : p.nodes)
      if (n) FSCTL_TRY(check(n));
  }
  return {};
}

}  // namespace fsctl::transaction
