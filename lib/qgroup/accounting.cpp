// SPDX-License-Identifier: GPL-2.0-only
// Qgroup numbers from the trees (DESIGN.md "Qgroup numbers"; invariant 7):
// one top-down walk of all subvolume trees with interned root sets, never a
// backref walk per extent. Memory: the walk frontier, the interned sets and
// one 16-byte record (PackedDataRef) per file extent item reached (sorted, then merged).
#include <algorithm>
#include <chrono>

#include "lib/base/phase_timer.h"
#include "lib/base/release_memory.h"
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

// The cache gives up `bytes` of its budget while it lives.
class CacheShare {
 public:
  CacheShare(cache::BlockCache& c, u64 bytes) : cache_(c), before_(c.outside_bytes()) {
    c.set_outside_bytes(before_ + bytes);
  }
  ~CacheShare() { cache_.set_outside_bytes(before_); }
  CacheShare(const CacheShare&) = delete;
  CacheShare& operator=(const CacheShare&) = delete;

 private:
  cache::BlockCache& cache_;
  u64 before_;
};

// Memory the C library kept from earlier work (a balance's transaction
// before its final verification: 59-82 MiB of freed blocks) is given back
// once the resident set comes within TRIM_MARGIN of the bound (budget +
// MEMORY_ALLOWANCE_BYTES), so that the walk's buffers replace it instead of
// adding to the peak: balance -m of bg-8T-16k peaked at 267 MiB without it
// (bound 256). Not before: giving it back costs a walk of the heap and an
// madvise per free fragment (90-100 ms after a balance of 39,163 blocks),
// and where the walk's buffers stay small (balance-16snap-4k: 48,297 data
// extents) it is not needed. The resident set is read every TRIM_CHECK_BYTES
// of tree blocks walked; what the walk adds between two reads (those blocks
// in the cache, their data references, the memo) stays under TRIM_MARGIN.
class TrimNearBound {
 public:
  static constexpr u64 TRIM_MARGIN = 16ULL << 20;
  static constexpr u64 TRIM_CHECK_BYTES = 4ULL << 20;

  // `cache_size`: the command's --cache-size in bytes (its bound is that
  // plus MEMORY_ALLOWANCE_BYTES).
  explicit TrimNearBound(u64 cache_size) : limit_(cache_size + MEMORY_ALLOWANCE_BYTES - TRIM_MARGIN) { check(); }

  // Called per tree block walked (`bytes`: its size).
  void on_walked(u64 bytes) {
    if (done_) return;
    since_ += bytes;
    if (since_ < TRIM_CHECK_BYTES) return;
    since_ = 0;
    check();
  }

 private:
  void check() {
    if (done_ || resident_bytes() <= limit_) return;
    release_free_memory();
    done_ = true;
  }
  u64 limit_;
  u64 since_ = 0;
  bool done_ = false;
};

// Referenced/exclusive of every qgroup in `qgroups` from the bytes of each
// root set. Level 0 (a subvolume's own qgroup, members {id}): referenced =
// bytes of the sets holding it, exclusive = bytes of the set {id}, summed
// over each set's runs of root indexes at once (a difference array), so the
// cost is the number of runs, not qgroups x sets x members. Higher levels:
// any/all of the members per set.
void sum_counts(const QuotaState& quota, const std::set<u64>& qgroups, const ctree::RootSets& sets,
                const std::vector<u64>& bytes_by_set, std::map<u64, QgroupCount>& counts) {
  std::vector<u64> rfer_by_index(sets.roots() + 1, 0), excl_by_index(sets.roots(), 0);
  for (u32 rs = 1; rs < bytes_by_set.size(); ++rs) {
    if (!bytes_by_set[rs]) continue;
    auto m = sets.get(rs);
    for (u32 i = 0; i < m.runs(); ++i) {
      auto [first, last] = m.run(i);
      rfer_by_index[first] += bytes_by_set[rs];
      rfer_by_index[last + 1] -= bytes_by_set[rs];  // modulo 2^64: the prefix sums come out right
    }
    if (m.size() == 1) excl_by_index[m.run(0).first] += bytes_by_set[rs];
  }
  std::map<u64, QgroupCount> level0;  // by subvolume id
  u64 running = 0;
  for (u32 i = 0; i < sets.roots(); ++i) {
    running += rfer_by_index[i];
    level0[sets.root_id(i)] = {running, running, excl_by_index[i], excl_by_index[i]};
  }
  for (u64 q : qgroups) {
    if (qgroup_level(q) == 0) {
      auto it = level0.find(qgroup_subvolid(q));
      counts[q] = it == level0.end() ? QgroupCount{} : it->second;
      continue;
    }
    std::set<u64> members = level0_members(quota, q);
    QgroupCount c;
    for (u32 rs = 1; rs < bytes_by_set.size(); ++rs) {
      if (!bytes_by_set[rs]) continue;
      bool any = false, all = true;
      for (u64 r : sets.get(rs)) {
        bool in = members.count(r) > 0;
        any |= in;
        all &= in;
      }
      if (any) c.rfer += bytes_by_set[rs];
      if (all) c.excl += bytes_by_set[rs];
    }
    c.rfer_cmpr = c.rfer;
    c.excl_cmpr = c.excl;
    counts[q] = c;
  }
}

}  // namespace

std::vector<SubvolRoot> subvolume_roots(const fs::FsInfo& fs) {
  std::vector<SubvolRoot> out;
  for (auto& e : fs.root_entries())
    if (is_fstree(e.key.objectid)) out.push_back(subvol_of(e));
  return out;
}

WalkBudget walk_budget(u64 cache_budget) {
  WalkBudget b;
  b.data_refs = std::max<u64>(cache_budget / 2, 4ULL << 20);
  b.union_memo = std::max<u64>(cache_budget / 32, 1ULL << 20);
  return b;
}

Result<Computed> compute_qgroups(fs::FsInfo& fs, const QuotaState& quota, u64 data_ref_budget, ProgressObserver* progress) {
  if (quota.simple_quota) return compute_squota(fs, quota, progress);
  auto t0 = std::chrono::steady_clock::now();
  Computed out;
  PhaseTimer timer(fs.phase_sink());
  WalkBudget budget = walk_budget(fs.cache().budget());
  if (data_ref_budget) budget.data_refs = data_ref_budget;
  CacheShare share(fs.cache(), budget.data_refs + budget.union_memo);
  TrimNearBound trim(fs.cache().budget() + fs.io_budget());  // --cache-size
  ctree::RootSets sets(budget.union_memo);
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
      bool touched = false;
      for (u64 r : sets.get(rs)) touched |= dropping.count(r) > 0;
      if (!touched || slot + 1 >= parent.nritems()) return rs;
      Key next = parent.node_key(slot + 1);
      u32 keep = 0;
      const std::vector<u64> members = sets.sorted(rs);  // unite() below may move the sets' storage
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
  DataRefs data(sets, budget.data_refs);
  u32 ns = fs.nodesize();
  FSCTL_TRY(ctree::walk_trees(fs, roots, sets, [&](const cache::TreeBlockRef& b, u32 rs) -> Status {
    NodeView v = b->view();
    out.tree_blocks++;
    add_bytes(rs, ns);
    trim.on_walked(ns);
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
      if (auto r = data.add({fe->disk_bytenr, fe->disk_num_bytes, rs}); !r)
        return make_error(r.error().context("tree block " + std::to_string(b->bytenr) + " slot " + std::to_string(i)).about_bytenr(b->bytenr));
    }
    return {};
  }, filter));
  timer.mark("qgroups: walk subvolume trees");
  FSCTL_TRY(data.for_each_extent([&](u64, u64 num_bytes, u32 rs) {
    add_bytes(rs, num_bytes);
    out.data_extents++;
  }));
  timer.mark("qgroups: merge data extent references");
  out.spilled_runs = data.spilled_runs();

  // Qgroups to report: every one in the quota tree, and a level-0 one per subvolume.
  std::set<u64> qgroups;
  for (auto& [id, g] : quota.qgroups) qgroups.insert(id);
  for (auto& s : out.subvols) qgroups.insert(s.root_id);
  sum_counts(quota, qgroups, sets, bytes_by_set, out.counts);
  out.rootsets = sets.size();
  out.rootset_bytes = sets.memory_bytes();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace fsctl::qgroup
