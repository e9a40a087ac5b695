// SPDX-License-Identifier: GPL-2.0-only
// MemTrees: a ctree::TreeWriter over blocks in memory, for the unit tests of
// lib/ctree that build trees (one transaction, nothing freed for good).
#pragma once
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/ctree/tree_checker.h"
#include "lib/ctree/write.h"
#include "lib/format/tree_header.h"

namespace fsctl::test {

// Blocks in memory, one transaction, nothing freed for good.
class MemTrees final : public ctree::TreeWriter {
 public:
  u64 transid() const override { return 10; }
  u32 nodesize() const override { return 4096; }
  Result<std::shared_ptr<cache::TreeBlock>> alloc_tree_block(u64 owner, u8 level) override {
    auto b = std::make_shared<cache::TreeBlock>();
    b->bytenr = next_ += 4096;
    b->data.assign(4096, 0);
    b->dirty = true;
    format::TreeBlockHeader h;
    h.bytenr = b->bytenr;
    h.generation = transid();
    h.owner = owner;
    h.level = level;
    format::store_header(b->data, h);
    blocks_[b->bytenr] = b;
    return b;
  }
  Status free_tree_block(u64, u64, u8) override { return {}; }
  std::shared_ptr<cache::TreeBlock> dirty_block(u64 bytenr) override {
    auto it = blocks_.find(bytenr);
    return it == blocks_.end() ? nullptr : it->second;
  }
  Result<cache::TreeBlockRef> read_tree_block(u64 bytenr, const ctree::ParentCheck& check) override {
    auto it = blocks_.find(bytenr);
    if (it == blocks_.end()) return make_error(Errc::not_found, "no block " + std::to_string(bytenr));
    FSCTL_TRY(ctree::check_node_layout(it->second->data, 4096));
    FSCTL_TRY(ctree::check_parent(it->second->view(), check));
    return cache::TreeBlockRef(it->second);
  }
  Status read_tree_blocks(std::vector<ctree::BlockRequest> reqs, const std::function<Status(const cache::TreeBlockRef&)>& visit,
                          bool) override {
    for (auto& r : reqs) {
      FSCTL_TRY_ASSIGN(auto b, read_tree_block(r.bytenr, r.check));
      FSCTL_TRY(visit(b));
    }
    return {};
  }
  ctree::WriteRoot new_tree(u64 id) {
    auto leaf = alloc_tree_block(id, 0);
    REQUIRE(leaf);
    return ctree::WriteRoot{id, (*leaf)->bytenr, 0, transid()};
  }

 private:
  u64 next_ = 1 << 20;
  std::map<u64, std::shared_ptr<cache::TreeBlock>> blocks_;
};

}  // namespace fsctl::test
