// SPDX-License-Identifier: GPL-2.0-only
// Top-down multi-root walk; memory is one frontier (pointers of the next
// level) plus the interned root sets.
#include "lib/ctree/tree_walk.h"

#include <algorithm>
#include <unordered_map>

#include "lib/format/node_layout.h"

namespace fsctl::ctree {
using namespace fsctl::format;

namespace {
constexpr u64 UNION_ENTRY_BYTES = 48;  // an unordered_map node and its bucket
}  // namespace

RootSets::RootSets(u64 memo_bytes) : max_unions_(std::max<u64>(1024, memo_bytes / UNION_ENTRY_BYTES)) {
  sets_.push_back({0, 0, 0});
  index_.assign(1024, 0);
  index_[hash_of(nullptr, 0) & (index_.size() - 1)] = 1;
}

u64 RootSets::hash_of(const u32* runs, u32 nruns) const {
  u64 h = 0x9e3779b97f4a7c15ULL ^ nruns;
  for (u32 i = 0; i < 2 * nruns; ++i) {
    h ^= runs[i];
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
  }
  return h;
}

void RootSets::grow_index() {
  std::vector<u32> bigger(index_.size() * 2, 0);
  for (u32 slot : index_) {
    if (!slot) continue;
    const Set& s = sets_[slot - 1];
    u64 i = hash_of(arena_.data() + s.offset, s.nruns) & (bigger.size() - 1);
    while (bigger[i]) i = (i + 1) & (bigger.size() - 1);
    bigger[i] = slot;
  }
  index_.swap(bigger);
}

u32 RootSets::intern(const std::vector<u32>& runs) {
  u32 nruns = static_cast<u32>(runs.size() / 2);
  u64 mask = index_.size() - 1;
  for (u64 i = hash_of(runs.data(), nruns) & mask;; i = (i + 1) & mask) {
    u32 slot = index_[i];
    if (!slot) break;
    const Set& s = sets_[slot - 1];
    if (s.nruns == nruns && std::equal(runs.begin(), runs.end(), arena_.begin() + static_cast<std::ptrdiff_t>(s.offset))) return slot - 1;
  }
  u32 count = 0;
  for (u32 i = 0; i < nruns; ++i) count += runs[2 * i + 1] - runs[2 * i] + 1;
  u32 id = static_cast<u32>(sets_.size());
  sets_.push_back({arena_.size(), nruns, count});
  arena_.insert(arena_.end(), runs.begin(), runs.end());
  if (2 * sets_.size() > index_.size()) grow_index();
  mask = index_.size() - 1;
  u64 i = hash_of(runs.data(), nruns) & mask;
  while (index_[i]) i = (i + 1) & mask;
  index_[i] = id + 1;
  return id;
}

u32 RootSets::single(u64 root_id) {
  auto [it, inserted] = root_index_.try_emplace(root_id, static_cast<u32>(root_ids_.size()));
  if (inserted) root_ids_.push_back(root_id);
  scratch_.assign({it->second, it->second});
  return intern(scratch_);
}

void RootSets::append_run(u32 first, u32 last) {
  if (!scratch_.empty() && u64{first} <= u64{scratch_.back()} + 1) {
    scratch_.back() = std::max(scratch_.back(), last);
  } else {
    scratch_.push_back(first);
    scratch_.push_back(last);
  }
}

u32 RootSets::unite(u32 a, u32 b) {
  if (a == b || b == 0) return a;
  if (a == 0) return b;
  if (a > b) std::swap(a, b);
  u64 key = u64{a} << 32 | b;
  if (auto it = unions_.find(key); it != unions_.end()) return it->second;
  // Merge the two run lists, joining runs that overlap or touch.
  const Set& sa = sets_[a];
  const Set& sb = sets_[b];
  const u32* pa = arena_.data() + sa.offset;
  const u32* pb = arena_.data() + sb.offset;
  const u32 *ea = pa + 2 * sa.nruns, *eb = pb + 2 * sb.nruns;
  scratch_.clear();
  while (pa != ea || pb != eb) {
    const u32* next;
    if (pb == eb || (pa != ea && pa[0] <= pb[0])) {
      next = pa;
      pa += 2;
    } else {
      next = pb;
      pb += 2;
    }
    append_run(next[0], next[1]);
  }
  u32 id = intern(scratch_);
  if (unions_.size() >= max_unions_) unions_.clear();
  unions_.emplace(key, id);
  return id;
}

u32 RootSets::unite_all(std::vector<u32>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (!ids.empty() && ids.front() == 0) ids.erase(ids.begin());  // the empty set
  if (ids.empty()) return 0;
  if (ids.size() == 1) return ids[0];
  if (ids.size() == 2) return unite(ids[0], ids[1]);
  gather_.clear();
  for (u32 id : ids) {
    const Set& s = sets_[id];
    const u32* p = arena_.data() + s.offset;
    for (u32 i = 0; i < s.nruns; ++i) gather_.emplace_back(p[2 * i], p[2 * i + 1]);
  }
  std::sort(gather_.begin(), gather_.end());
  scratch_.clear();
  for (auto [first, last] : gather_) append_run(first, last);
  return intern(scratch_);
}

RootSets::Members RootSets::get(u32 id) const {
  const Set& s = sets_[id];
  return Members(this, arena_.data() + s.offset, s.nruns, s.count);
}

std::vector<u64> RootSets::sorted(u32 id) const {
  std::vector<u64> out;
  for (u64 r : get(id)) out.push_back(r);
  std::sort(out.begin(), out.end());
  return out;
}

u64 RootSets::memory_bytes() const {
  return sets_.capacity() * sizeof(Set) + arena_.capacity() * sizeof(u32) + index_.capacity() * sizeof(u32) +
         gather_.capacity() * sizeof(gather_[0]) + scratch_.capacity() * sizeof(u32) +
         unions_.size() * UNION_ENTRY_BYTES + root_ids_.capacity() * sizeof(u64) + root_index_.size() * UNION_ENTRY_BYTES;
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
  // Root indexes in ascending id order: a snapshot chain's sets become runs.
  std::vector<u64> ids;
  for (auto& r : roots) ids.push_back(r.root_id);
  std::sort(ids.begin(), ids.end());
  for (u64 id : ids) (void)sets.single(id);
  for (auto& r : roots) {
    if (r.level >= MAX_LEVEL) return make_error(Errc::corrupt, "root " + std::to_string(r.root_id) + " has level " + std::to_string(r.level));
    auto& slot = frontier[r.level][r.bytenr];
    slot.check.transid = r.generation;
    slot.check.level = r.level;
    slot.rootset = sets.unite(slot.rootset, sets.single(r.root_id));
    top = std::max(top, static_cast<int>(r.level));
  }
  // A child reached through several parents: its first parent's set in the
  // frontier, the others here, united by one unite_all once its level above
  // is read (pairwise unions interned every intermediate set).
  std::vector<std::pair<u64, u32>> more;
  std::vector<u32> set_ids;
  auto unite_more = [&](std::unordered_map<u64, Pending>& level_map) {
    std::sort(more.begin(), more.end());
    for (std::size_t i = 0; i < more.size();) {
      Pending& p = level_map.at(more[i].first);
      set_ids.assign({p.rootset});
      std::size_t j = i;
      for (; j < more.size() && more[j].first == more[i].first; ++j) set_ids.push_back(more[j].second);
      p.rootset = sets.unite_all(set_ids);
      i = j;
    }
    std::vector<std::pair<u64, u32>>().swap(more);
  };
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
          it->second.rootset = child_rs;
          continue;
        }
        if (it->second.check.transid != v.ptr_generation(i)) {
          return make_error(Errc::corrupt, "tree block " + std::to_string(child) + " is referenced with generation " +
                                               std::to_string(it->second.check.transid) + " and " +
                                               std::to_string(v.ptr_generation(i)) + " (second from node " +
                                               std::to_string(b->bytenr) + ")");
        }
        if (it->second.rootset != child_rs) more.emplace_back(child, child_rs);
      }
      return {};
    }));
    if (below) unite_more(*below);
    cur.clear();
    cur.rehash(0);
  }
  return {};
}

}  // namespace fsctl::ctree
