// SPDX-License-Identifier: GPL-2.0-only
// Level-synchronous walk of many trees at once: every block is read once, in
// physical order per level, and carries the set of roots that reach it (the
// union of its parents' sets). This is the top-down root-set propagation of
// DESIGN.md "Qgroup numbers" and the streaming read of DESIGN.md "Reading".
#pragma once
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

#include "lib/ctree/block_source.h"
#include "lib/format/node_layout.h"

namespace fsctl::ctree {

/// Interned sets of root ids; id 0 is the empty set. Memory grows with the
/// number of distinct sets, not with their sizes: roots get dense indexes
/// (in the order single() first meets them: register them in ascending id
/// order so that consecutive snapshot ids get consecutive indexes) and a set
/// is stored once, as its maximal runs of consecutive indexes, in one arena
/// (the sets of a snapshot chain are ranges of snapshots: a run or two each,
/// however many snapshots they hold). The memo of unions is a cache bounded
/// by `memo_bytes`: when full it is cleared (unions are recomputed, the ids
/// stay the same), so it never decides the result.
class RootSets {
 public:
  /// Sorted root ids of one set, as stored: a range over its runs.
  class Members {
   public:
    class iterator {
     public:
      using value_type = u64;
      using difference_type = std::ptrdiff_t;
      iterator() = default;
      iterator(const RootSets* s, const u32* run, u32 index) : s_(s), run_(run), index_(index) {}
      u64 operator*() const { return s_->root_ids_[index_]; }
      iterator& operator++() {
        if (index_ == run_[1]) {
          run_ += 2;
          index_ = run_ == end_run_ ? 0 : run_[0];
        } else {
          ++index_;
        }
        return *this;
      }
      iterator operator++(int) {
        iterator old = *this;
        ++*this;
        return old;
      }
      bool operator==(const iterator& o) const { return run_ == o.run_ && index_ == o.index_; }

     private:
      friend class Members;
      const RootSets* s_ = nullptr;
      const u32* run_ = nullptr;
      const u32* end_run_ = nullptr;
      u32 index_ = 0;
    };
    Members(const RootSets* s, const u32* runs, u32 nruns, u32 count) : s_(s), runs_(runs), nruns_(nruns), count_(count) {}
    [[nodiscard]] iterator begin() const {
      iterator it(s_, runs_, nruns_ ? runs_[0] : 0);
      it.end_run_ = runs_ + 2 * nruns_;
      return it;
    }
    [[nodiscard]] iterator end() const {
      iterator it(s_, runs_ + 2 * nruns_, 0);
      it.end_run_ = runs_ + 2 * nruns_;
      return it;
    }
    [[nodiscard]] std::size_t size() const { return count_; }
    [[nodiscard]] bool empty() const { return count_ == 0; }
    /// Runs of consecutive root indexes (index_of), first and last inclusive.
    [[nodiscard]] u32 runs() const { return nruns_; }
    [[nodiscard]] std::pair<u32, u32> run(u32 i) const { return {runs_[2 * i], runs_[2 * i + 1]}; }

   private:
    const RootSets* s_;
    const u32* runs_;
    u32 nruns_, count_;
  };

  explicit RootSets(u64 memo_bytes = 8ULL << 20);
  /// Id of the set holding exactly `root_id`.
  [[nodiscard]] u32 single(u64 root_id);
  /// Id of the union of two sets (memoized).
  [[nodiscard]] u32 unite(u32 a, u32 b);
  /// Id of the union of all sets in `ids` (reordered: sorted, duplicates
  /// removed), interning only the result. Uniting k sets pairwise interned
  /// k-1 intermediate sets, each kept for good: a block reached through the
  /// 1,600 parents of a snapshot chain (in bytenr order, not snapshot order)
  /// made ~1,600 fragmented sets, 94 MB of sets for the walk of 1,600
  /// snapshots, where the results need 1-2 runs each.
  [[nodiscard]] u32 unite_all(std::vector<u32>& ids);
  /// The members of set `id`, in the order of their indexes. The view is
  /// valid until the next single() or unite() (which may move the arena).
  [[nodiscard]] Members get(u32 id) const;
  /// The members of set `id` sorted by root id (tests, messages).
  [[nodiscard]] std::vector<u64> sorted(u32 id) const;
  [[nodiscard]] std::size_t size() const { return sets_.size(); }
  /// Roots met so far; index_of(root id) < roots().
  [[nodiscard]] u32 roots() const { return static_cast<u32>(root_ids_.size()); }
  [[nodiscard]] u64 root_id(u32 index) const { return root_ids_[index]; }
  /// Bytes held: sets, runs, index and memo (what the bound of DESIGN.md
  /// invariant 5 counts for the walk).
  [[nodiscard]] u64 memory_bytes() const;

 private:
  struct Set {
    u64 offset;  // first u32 of its runs in arena_
    u32 nruns;
    u32 count;
  };
  u32 intern(const std::vector<u32>& runs);
  /// Appends run [first, last] to scratch_, joining it with the last run
  /// when they overlap or touch. REQUIRES: runs appended by ascending first.
  void append_run(u32 first, u32 last);
  [[nodiscard]] u64 hash_of(const u32* runs, u32 nruns) const;
  void grow_index();
  std::vector<u64> root_ids_;                  // index -> root id
  std::unordered_map<u64, u32> root_index_;    // root id -> index
  std::vector<Set> sets_;
  std::vector<u32> arena_;                     // runs: first, last (inclusive) index pairs
  std::vector<u32> index_;                     // open addressing over set ids + 1 (0 = free)
  std::unordered_map<u64, u32> unions_;        // (a << 32 | b) -> union, a < b; a cache
  std::size_t max_unions_;
  std::vector<u32> scratch_;
  std::vector<std::pair<u32, u32>> gather_;  // unite_all's runs
};

/// Called once per block with the id of its root set in `sets`.
using WalkVisitor = std::function<Status(const cache::TreeBlockRef& block, u32 rootset)>;

/// Optional: the root set a child inherits through slot `slot` of `parent`
/// whose own set is `rootset` (default: `rootset` itself). Returning 0 (the
/// empty set) keeps the parent from leading the walk to that child; used to
/// leave out the already-dropped part of a subvolume being deleted.
using ChildSetFilter = std::function<u32(const format::NodeView& parent, u32 slot, u32 rootset)>;

/// Walks every tree in `roots` top-down, level by level. Children are checked
/// against their parent pointer (generation, level, first key). A block
/// reached through several parents is read once, after all its parents, with
/// the union of their root sets. Errors: read errors (naming the bytenr),
/// Errc::corrupt when two parents disagree on a child's generation, and
/// whatever the visitor returns.
[[nodiscard]] Status walk_trees(BlockSource& src, const std::vector<RootRef>& roots, RootSets& sets,
                                const WalkVisitor& visit, const ChildSetFilter& filter = {});

}  // namespace fsctl::ctree
