// SPDX-License-Identifier: GPL-2.0-only
// tree-stats over ctree::walk_trees: one streaming pass, root sets tell which
// trees share a block.
#include "check/tree_stats.h"

#include <chrono>

#include "lib/ctree/tree_walk.h"
#include "lib/format/names.h"

namespace fsctl::check {
using namespace fsctl::format;

Result<TreeStatsReport> tree_stats(fs::FsInfo& fs) {
  auto t0 = std::chrono::steady_clock::now();
  TreeStatsReport rep;
  std::vector<ctree::RootRef> roots;
  auto add = [&](ctree::RootRef r, u64 key_offset) {
    TreeStat s;
    s.root_id = r.root_id;
    s.key_offset = key_offset;
    s.name = tree_name(r.root_id);
    s.height = r.level + 1u;
    // The walk identifies trees by their index in rep.trees.
    r.root_id = rep.trees.size();
    rep.trees.push_back(s);
    roots.push_back(r);
  };
  add(fs.tree_root(), 0);
  add(fs.chunk_root(), 0);
  for (auto& e : fs.root_entries()) {
    ctree::RootRef r{e.key.objectid, e.item.bytenr, e.item.level, e.item.generation};
    if (e.item.refs == 0 && is_fstree(e.key.objectid)) {
      TreeStat s;
      s.root_id = e.key.objectid;
      s.key_offset = e.key.offset;
      s.name = tree_name(e.key.objectid);
      s.height = e.item.level + 1u;
      s.skipped = true;
      rep.trees.push_back(s);
      continue;
    }
    add(r, e.key.offset);
  }
  u64 before = fs.bytes_read();
  ctree::RootSets sets;
  u32 ns = fs.nodesize();
  FSCTL_TRY(ctree::walk_trees(fs, roots, sets, [&](const cache::TreeBlockRef& b, u32 rs) -> Status {
    NodeView v = b->view();
    rep.unique_blocks++;
    rep.unique_bytes += ns;
    for (u64 idx : sets.get(rs)) {
      auto& t = rep.trees[idx];
      if (v.is_leaf()) {
        t.leaves++;
        t.items += v.nritems();
      } else {
        t.nodes++;
      }
      t.bytes += ns;
    }
    return {};
  }));
  rep.bytes_read = fs.bytes_read() - before;
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace fsctl::check
