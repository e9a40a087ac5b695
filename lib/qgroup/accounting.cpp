// SPDX-License-Identifier: GPL-2.0-only
// Qgroup numbers from the trees (DESIGN.md "Qgroup numbers"; invariant 7):
// one top-down walk of all subvolume trees with interned root sets, never a
// backref walk per extent. Memory: the walk frontier, the interned sets and
// one 24-byte record per file extent item reached (sorted, then merged).
#include <algorithm>
#include <chrono>

#include "lib/ctree/tree_walk.h"
#include "lib/format/file_extent.h"
#include "lib/format/items.h"
#include "lib/qgroup/data_refs.h"
#include "lib/qgroup/qgroup.h"

namespace fsctl::qgroup {
using namespace fsctl::format;

std::set<u64> level0_members(const QuotaState& quota, u64 q) {
  std::set<u64> out;
  std::vector<u64> stack{q};
  std::set<u64> seen;
  while (!stack.empty()) {
    u64 g = stack.back();
    stack.pop_back();
    if (!seen.insert(g).second) continue;
    if (qgroup_level(g) == 0) {
      out.insert(qgroup_subvolid(g));
      continue;
    }
    auto it = quota.qgroups.find(g);
    if (it == quota.qgroups.end()) continue;
    for (u64 c : it->second.children) stack.push_back(c);
  }
  return out;
}

namespace {

SubvolRoot subvol_of(const fs::RootEntry& e) {
  SubvolRoot sr;
  sr.root_id = e.key.objectid;
  sr.dropping = e.item.refs == 0;
  sr.drop_progress = e.item.drop_progress;
  sr.drop_level = e.item.drop_level;
  return sr;
}

}  // namespace

std::vector<SubvolRoot> subvolume_roots(const fs::FsInfo& fs) {
  std::vector<SubvolRoot> out;
  for (auto& e : fs.root_entries())
    if (is_fstree(e.key.objectid)) out.push_back(subvol_of(e));
  return out;
}

Result<Computed> compute_qgroups(fs::FsInfo& fs, const QuotaState& quota, u64 data_ref_budget, ProgressObserver* progress) {
  if (quota.simple_quota) return compute_squota(fs, quota, progress);
  auto t0 = std::chrono::steady_clock::now();
  Computed out;
  ctree::RootSets sets;
  std::vector<ctree::RootRef> roots;
  std::map<u64, SubvolRoot> dropping;  // by root id
  for (auto& e : fs.root_entries()) {
    if (!is_fstree(e.key.objectid)) continue;
    SubvolRoot sr = subvol_of(e);
    out.subvols.push_back(sr);
    if (sr.dropping && sr.drop_progress.objectid != 0) dropping[sr.root_id] = sr;
    roots.push_back({e.key.objectid, e.item.bytenr, e.item.level, e.item.generation});
  }
  // A subvolume being deleted keeps only the part right of drop_progress:
  // a child whose whole key range lies before it was already dropped.
  ctree::ChildSetFilter filter;
  if (!dropping.empty()) {
    filter = [&](const NodeView& parent, u32 slot, u32 rs) -> u32 {
      const auto& members = sets.get(rs);
      bool touched = false;
      for (u64 r : members) touched |= dropping.count(r) > 0;
      if (!touched || slot + 1 >= parent.nritems()) return rs;
      Key next = parent.node_key(slot + 1);
      u32 keep = 0;
      for (u64 r : members) {
        auto it = dropping.find(r);
        if (it != dropping.end() && !(it->second.drop_progress < next)) continue;
        keep = sets.unite(keep, sets.single(r));
      }
      return keep;
    };
  }
  std::vector<u64> bytes_by_set;
  auto add_bytes = [&](u32 rs, u64 n) {
    if (rs >= bytes_by_set.size()) bytes_by_set.resize(rs + 1, 0);
    bytes_by_set[rs] += n;
  };
  DataRefs data(sets, data_ref_budget);
  u32 ns = fs.nodesize();
  FSCTL_TRY(ctree::walk_trees(fs, roots, sets, [&](const cache::TreeBlockRef& b, u32 rs) -> Status {
    NodeView v = b->view();
    out.tree_blocks++;
    add_bytes(rs, ns);
    if (progress) {
      ProgressCounts c;
      c.tree_blocks_done = out.tree_blocks;
      c.bytes_done = out.tree_blocks * ns;
      progress->on_progress(c);
    }
    if (!v.is_leaf()) return {};
    for (u32 i = 0; i < v.nritems(); ++i) {
      if (v.item_type_at(i) != KeyType::EXTENT_DATA) continue;
      auto fe = decode_file_extent(v.item_data(i));
      if (!fe) return make_error(fe.error().context("tree block " + std::to_string(b->bytenr) + " slot " + std::to_string(i)));
      if (!fe->has_data_extent()) continue;  // inline, or a hole
      FSCTL_TRY(data.add({fe->disk_bytenr, fe->disk_num_bytes, rs}));
    }
    return {};
  }, filter));
  FSCTL_TRY(data.for_each_extent([&](u64, u64 num_bytes, u32 rs) {
    add_bytes(rs, num_bytes);
    out.data_extents++;
  }));
  out.spilled_runs = data.spilled_runs();

  // Qgroups to report: every one in the quota tree, and a level-0 one per subvolume.
  std::set<u64> qgroups;
  for (auto& [id, g] : quota.qgroups) qgroups.insert(id);
  for (auto& s : out.subvols) qgroups.insert(s.root_id);
  for (u64 q : qgroups) {
    std::set<u64> members = level0_members(quota, q);
    QgroupCount c;
    for (u32 rs = 1; rs < bytes_by_set.size(); ++rs) {
      if (!bytes_by_set[rs]) continue;
      const auto& set = sets.get(rs);
      bool any = false, all = true;
      for (u64 r : set) {
        bool in = members.count(r) > 0;
        any |= in;
        all &= in;
      }
      if (any) c.rfer += bytes_by_set[rs];
      if (all && !set.empty()) c.excl += bytes_by_set[rs];
    }
    c.rfer_cmpr = c.rfer;
    c.excl_cmpr = c.excl;
    out.counts[q] = c;
  }
  out.rootsets = sets.size();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace fsctl::qgroup
