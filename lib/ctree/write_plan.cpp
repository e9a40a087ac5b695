// SPDX-License-Identifier: GPL-2.0-only
// count_planned_blocks: a replay of planned item changes through write.cpp
// on an in-memory shadow of one tree (DESIGN.md invariant 4, the key-aware
// reservation). The shadow hands out bytenrs no chunk maps (above 2^62), so
// they can never be confused with real blocks.
#include "lib/ctree/write_plan.h"

#include <map>

#include "lib/ctree/tree_checker.h"
#include "lib/ctree/write.h"
#include "lib/format/tree_header.h"

namespace fsctl::ctree {
using namespace fsctl::format;

namespace {

constexpr u64 SHADOW_BASE = 1ULL << 62;

class ShadowWriter final : public TreeWriter {
 public:
  ShadowWriter(BlockSource& src, u64 transid, u64 limit) : src_(src), transid_(transid), limit_(limit) {}
  u64 transid() const override { return transid_; }
  u32 nodesize() const override { return src_.nodesize(); }
  Result<std::shared_ptr<cache::TreeBlock>> alloc_tree_block(u64 owner, u8 level) override {
    if (allocated_ >= limit_) return make_error(Errc::nospc, "planned changes allocate more than " + std::to_string(limit_) + " blocks");
    u32 ns = nodesize();
    auto b = std::make_shared<cache::TreeBlock>();
    b->bytenr = SHADOW_BASE + allocated_ * ns;
    b->data.assign(ns, 0);
    b->dirty = true;
    TreeBlockHeader h;
    h.bytenr = b->bytenr;
    h.generation = transid_;
    h.owner = owner;
    h.level = level;
    store_header(b->data, h);
    blocks_[b->bytenr] = b;
    allocated_++;
    return b;
  }
  Status free_tree_block(u64 bytenr, u64, u8) override {
    blocks_.erase(bytenr);  // a real block: nothing to undo, it is never read again
    return {};
  }
  using TreeWriter::dirty_block;
  std::shared_ptr<cache::TreeBlock> dirty_block(u64 bytenr) override {
    auto it = blocks_.find(bytenr);
    return it == blocks_.end() ? nullptr : it->second;
  }
  Result<cache::TreeBlockRef> read_tree_block(u64 bytenr, const ParentCheck& check) override {
    if (auto d = dirty_block(bytenr)) {
      FSCTL_TRY(check_parent(d->view(), check));
      return cache::TreeBlockRef(d);
    }
    return src_.read_tree_block(bytenr, check);
  }
  Status read_tree_blocks(std::vector<BlockRequest> reqs, const std::function<Status(const cache::TreeBlockRef&)>& visit,
                          bool keep_in_cache) override {
    std::vector<BlockRequest> rest;
    for (auto& r : reqs) {
      if (auto d = dirty_block(r.bytenr)) {
        FSCTL_TRY(visit(cache::TreeBlockRef(d)));
      } else {
        rest.push_back(r);
      }
    }
    return src_.read_tree_blocks(std::move(rest), visit, keep_in_cache);
  }
  [[nodiscard]] u64 allocated() const { return allocated_; }

 private:
  BlockSource& src_;
  u64 transid_;
  u64 limit_;
  u64 allocated_ = 0;
  std::map<u64, std::shared_ptr<cache::TreeBlock>> blocks_;
};

Status apply(ShadowWriter& w, WriteRoot& root, const PlannedChange& c) {
  Path path;
  switch (c.kind) {
    case PlannedChange::Kind::insert:
      return insert_empty_item(w, root, c.key, c.size, path);
    case PlannedChange::Kind::update: {
      FSCTL_TRY(search_slot_for_write(w, root, c.key, 0, path));
      return {};
    }
    case PlannedChange::Kind::resize: {
      // The growth is only known from the item's present size: look first.
      FSCTL_TRY_ASSIGN(bool found, search_slot_for_write(w, root, c.key, 0, path));
      if (!found) return make_error(Errc::invalid_argument, "planned resize of missing item " + key_to_string(c.key));
      u32 old = path.leaf_view().item_size(path.slots[0]);
      if (c.size > old) {
        FSCTL_TRY(search_slot_for_write(w, root, c.key, c.size - old, path));
      }
      return resize_item(w, path, c.size);
    }
    case PlannedChange::Kind::erase: {
      FSCTL_TRY_ASSIGN(bool found, search_slot_for_write(w, root, c.key, 0, path));
      if (!found) return make_error(Errc::invalid_argument, "planned deletion of missing item " + key_to_string(c.key));
      return delete_item(w, root, path);
    }
  }
  return {};
}

}  // namespace

Result<PlanCount> count_planned_blocks(BlockSource& src, u64 root_id, const std::optional<RootRef>& root, u64 transid,
                                       std::span<const PlannedChange> changes, u64 limit) {
  ShadowWriter w(src, transid, limit);
  PlanCount out;
  WriteRoot wr;
  if (root) {
    wr = WriteRoot{root_id, root->bytenr, root->level, root->generation};
  } else {
    FSCTL_TRY_ASSIGN(auto leaf, w.alloc_tree_block(root_id, 0));
    wr = WriteRoot{root_id, leaf->bytenr, 0, transid};
  }
  for (const auto& c : changes) {
    auto st = apply(w, wr, c);
    if (!st) {
      if (st.error().code == Errc::nospc && w.allocated() >= limit) {
        out.capped = true;
        break;
      }
      return make_error(st.error().context("replaying planned changes of tree " + std::to_string(root_id)));
    }
  }
  out.blocks = w.allocated();
  out.stats = wr.stats;
  out.level = wr.level;
  return out;
}

}  // namespace fsctl::ctree
