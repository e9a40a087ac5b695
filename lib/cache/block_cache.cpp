// SPDX-License-Identifier: GPL-2.0-only
// LRU tree block cache with a byte budget.
#include "lib/cache/block_cache.h"

namespace fsctl::cache {

TreeBlockRef BlockCache::lookup(u64 bytenr) {
  auto it = index_.find(bytenr);
  if (it == index_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  return *it->second;
}

void BlockCache::insert(TreeBlockRef block) {
  erase(block->bytenr);
  bytes_ += block->data.size();
  lru_.push_front(block);
  index_[block->bytenr] = lru_.begin();
  evict();
}

void BlockCache::set_outside_bytes(u64 bytes) {
  outside_ = bytes;
  evict();
}

void BlockCache::evict() {
  while (bytes_ + outside_ > budget_ && !lru_.empty()) {
    auto& victim = lru_.back();
    bytes_ -= victim->data.size();
    index_.erase(victim->bytenr);
    lru_.pop_back();
  }
}

void BlockCache::erase(u64 bytenr) {
  auto it = index_.find(bytenr);
  if (it == index_.end()) return;
  bytes_ -= (*it->second)->data.size();
  lru_.erase(it->second);
  index_.erase(it);
}

}  // namespace fsctl::cache
