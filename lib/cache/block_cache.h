// SPDX-License-Identifier: GPL-2.0-only
// BlockCache: verified tree blocks by bytenr under a memory budget, least
// recently used evicted first (DESIGN.md invariant 5: bounded memory).
#pragma once
#include <list>
#include <unordered_map>

#include "lib/cache/tree_block.h"

namespace fsctl::cache {

class BlockCache {
 public:
  /// `budget_bytes`: the most block bytes held by the cache itself. Blocks
  /// still referenced by callers (paths) stay alive outside the budget.
  explicit BlockCache(u64 budget_bytes) : budget_(budget_bytes) {}
  /// The cached block at `bytenr`, or nullptr. Marks it most recently used.
  [[nodiscard]] TreeBlockRef lookup(u64 bytenr);
  /// Adds (or replaces) a block, evicting least recently used ones beyond the budget.
  void insert(TreeBlockRef block);
  /// Drops a block (e.g. after a failed verification elsewhere).
  void erase(u64 bytenr);
  /// Bytes of other tree blocks held in memory under the same budget (a
  /// transaction's dirty blocks): the cache keeps bytes() <= budget() minus
  /// them, evicting at once when they grow.
  void set_outside_bytes(u64 bytes);
  [[nodiscard]] u64 outside_bytes() const { return outside_; }
  [[nodiscard]] u64 bytes() const { return bytes_; }
  [[nodiscard]] u64 budget() const { return budget_; }
  [[nodiscard]] u64 hits() const { return hits_; }
  [[nodiscard]] u64 misses() const { return misses_; }

 private:
  using Lru = std::list<TreeBlockRef>;
  u64 budget_;
  u64 bytes_ = 0;
  u64 outside_ = 0;
  void evict();
  u64 hits_ = 0, misses_ = 0;
  Lru lru_;  // front = most recent
  std::unordered_map<u64, Lru::iterator> index_;
};

}  // namespace fsctl::cache
