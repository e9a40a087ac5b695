// SPDX-License-Identifier: GPL-2.0-only
// Finding the paths to a global tree's blocks in the targets (global_trees.h;
// DESIGN.md "Relocation for `balance -m`").
#include "lib/relocation/global_trees.h"

#include "lib/ctree/search.h"
#include "lib/format/node_layout.h"

namespace fsctl::relocation {
using namespace fsctl::format;
using transaction::Transaction;

Result<std::vector<Key>> find_target_paths(Transaction& t, const ctree::WriteRoot& r, const std::function<bool(u64)>& in_target,
                                           std::set<u64>& found) {
  std::vector<Key> keys;
  if (in_target(r.bytenr)) {
    found.insert(r.bytenr);
    keys.push_back(KEY_MIN);
  }
  std::vector<ctree::BlockRequest> level;
  ctree::ParentCheck rc;
  rc.transid = r.generation;
  rc.level = r.level;
  if (r.level > 0) level.push_back({r.bytenr, rc});
  while (!level.empty()) {
    std::vector<ctree::BlockRequest> next;
    FSCTL_TRY(t.read_tree_blocks(level, [&](const cache::TreeBlockRef& b) -> Status {
      NodeView v = b->view();
      for (u32 i = 0; i < v.nritems(); ++i) {
        if (in_target(v.blockptr(i))) {
          keys.push_back(v.node_key(i));
          found.insert(v.blockptr(i));
        }
        if (v.level() > 1) next.push_back({v.blockptr(i), ctree::child_check(v, i)});
      }
      return {};
    }));
    level = std::move(next);
  }
  return keys;
}

}  // namespace fsctl::relocation
