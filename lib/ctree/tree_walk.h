// SPDX-License-Identifier: GPL-2.0-only
// Level-synchronous walk of many trees at once: every block is read once, in
// physical order per level, and carries the set of roots that reach it (the
// union of its parents' sets). This is the top-down root-set propagation of
// DESIGN.md "Qgroup numbers" and the streaming read of DESIGN.md "Reading".
#pragma once
#include <functional>
#include <map>
#include <vector>

#include "lib/ctree/block_source.h"
#include "lib/format/node_layout.h"

namespace fsctl::ctree {

/// Interned sets of root ids; id 0 is the empty set. Sets are sorted vectors.
class RootSets {
 public:
  RootSets();
  /// Id of the set holding exactly `root_id`.
  [[nodiscard]] u32 single(u64 root_id);
  /// Id of the union of two sets (memoized).
  [[nodiscard]] u32 unite(u32 a, u32 b);
  [[nodiscard]] const std::vector<u64>& get(u32 id) const { return sets_[id]; }
  [[nodiscard]] std::size_t size() const { return sets_.size(); }

 private:
  u32 intern(std::vector<u64> s);
  std::vector<std::vector<u64>> sets_;
  std::map<std::vector<u64>, u32> index_;
  std::map<std::pair<u32, u32>, u32> unions_;
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
