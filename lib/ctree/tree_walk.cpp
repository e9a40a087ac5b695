// SPDX-License-Identifier: GPL-2.0-only
// Top-down multi-root walk; memory is one frontier (pointers of the next
// level) plus the interned root sets.
#include "lib/ctree/tree_walk.h"

#include <algorithm>
#include <unordered_map>

#include "lib/format/node_layout.h"

namespace fsctl::ctree {
using namespace fsctl::format;

RootSets::RootSets() { sets_.emplace_back(); index_[{}] = 0; }

u32 RootSets::intern(std::vector<u64> s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  u32 id = static_cast<u32>(sets_.size());
  index_.emplace(s, id);
  sets_.push_back(std::move(s));
  return id;
}

u32 RootSets::single(u64 root_id) { return intern({root_id}); }

u32 RootSets::unite(u32 a, u32 b) {
  if (a == b || b == 0) return a;
  if (a == 0) return b;
  auto key = std::minmax(a, b);
  auto it = unions_.find(key);
  if (it != unions_.end()) return it->second;
  std::vector<u64> out;
  std::set_union(sets_[a].begin(), sets_[a].end(), sets_[b].begin(), sets_[b].end(), std::back_inserter(out));
  u32 id = intern(std::move(out));
  unions_.emplace(key, id);
  return id;
}

namespace {
struct Pending {
  ParentCheck check;
  u32 rootset = 0;
};
}  // namespace

Status walk_trees(BlockSource& src, const std::vector<RootRef>& roots, RootSets& sets, const WalkVisitor& visit,
                  const ChildSetFilter& filter) {
  std::array<std::unordered_map<u64, Pending>, MAX_LEVEL> frontier;
  int top = -1;
  for (auto& r : roots) {
    if (r.level >= MAX_LEVEL) return make_error(Errc::corrupt, "root " + std::to_string(r.root_id) + " has level " + std::to_string(r.level));
    auto& slot = frontier[r.level][r.bytenr];
    slot.check.transid = r.generation;
    slot.check.level = r.level;
    slot.rootset = sets.unite(slot.rootset, sets.single(r.root_id));
    top = std::max(top, static_cast<int>(r.level));
  }
  for (int level = top; level >= 0; --level) {
    auto& cur = frontier[static_cast<std::size_t>(level)];
    if (cur.empty()) continue;
    std::vector<BlockRequest> reqs;
    reqs.reserve(cur.size());
    for (auto& [bytenr, p] : cur) reqs.push_back({bytenr, p.check});
    auto* below = level > 0 ? &frontier[static_cast<std::size_t>(level - 1)] : nullptr;
    FSCTL_TRY(src.read_tree_blocks(std::move(reqs), [&](const cache::TreeBlockRef& b) -> Status {
      u32 rs = cur.at(b->bytenr).rootset;
      FSCTL_TRY(visit(b, rs));
      if (!below) return {};
      NodeView v = b->view();
      for (u32 i = 0; i < v.nritems(); ++i) {
        u64 child = v.blockptr(i);
        u32 child_rs = filter ? filter(v, i, rs) : rs;
        if (child_rs == 0) continue;
        auto [it, inserted] = below->try_emplace(child);
        if (inserted) {
          it->second.check.transid = v.ptr_generation(i);
          it->second.check.level = level - 1;
          it->second.check.first_key = v.node_key(i);
        } else if (it->second.check.transid != v.ptr_generation(i)) {
          return make_error(Errc::corrupt, "tree block " + std::to_string(child) + " is referenced with generation " +
                                               std::to_string(it->second.check.transid) + " and " +
                                               std::to_string(v.ptr_generation(i)) + " (second from node " +
                                               std::to_string(b->bytenr) + ")");
        }
        it->second.rootset = sets.unite(it->second.rootset, child_rs);
      }
      return {};
    }));
    cur.clear();
    cur.rehash(0);
  }
  return {};
}

}  // namespace fsctl::ctree
