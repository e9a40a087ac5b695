// SPDX-License-Identifier: GPL-2.0-only
// DelayedRefs (delayed_refs.h): extent items of tree blocks at commit (kernel
// extent-tree.c alloc_reserved_tree_block / __btrfs_free_extent).
#include "lib/transaction/delayed_refs.h"

#include "lib/ctree/search.h"
#include "lib/ctree/tree_block_extent.h"
#include "lib/ctree/write.h"
#include "lib/format/extent_item.h"
#include "lib/format/super.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

namespace {

// The first key of new block `bytenr` (zero for an empty one), for the
// btrfs_tree_block_info of an old-form item. The kernel stores the key the
// block had when it was allocated and never updates it; the kernel's
// relocation and btrfs check read the level from it, not the key.
Result<Key> first_key_of(Transaction& t, u64 bytenr) {
  FSCTL_TRY_ASSIGN(auto b, t.read_tree_block(bytenr, ctree::ParentCheck{}));
  NodeView v = b->view();
  return v.nritems() ? v.key(0) : Key{};
}

}  // namespace

bool writes_skinny_metadata(const fs::FsInfo& fs) { return fs.super().incompat_flags.get() & INCOMPAT_SKINNY_METADATA; }

Status DelayedRefs::apply_drops(Transaction& t) {
  if (drops_.empty()) return {};
  auto drops = std::move(drops_);
  drops_.clear();
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  for (auto& [bytenr, ref] : drops) {
    ctree::Path p;
    FSCTL_TRY_ASSIGN(auto k, ctree::find_tree_block_extent_for_write(t, *ext, bytenr, ref.level, p));
    if (!k) return make_error(Errc::corrupt, "extent item of tree block " + std::to_string(bytenr) + " vanished");
    FSCTL_TRY(ctree::delete_item(t, *ext, p));
  }
  return {};
}

Status DelayedRefs::apply_adds(Transaction& t) {
  if (adds_.empty()) return {};
  auto adds = std::move(adds_);
  adds_.clear();
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  // The form the superblock says (kernel alloc_reserved_tree_block: the
  // skinny METADATA_ITEM only with SKINNY_METADATA, else an EXTENT_ITEM of
  // nodesize with btrfs_tree_block_info).
  bool skinny = writes_skinny_metadata(t.fs());
  for (auto& [bytenr, ref] : adds) {
    if (!t.is_new(bytenr)) continue;  // freed again meanwhile
    Key first{};
    if (!skinny) {
      FSCTL_TRY_ASSIGN(first, first_key_of(t, bytenr));
    }
    ExtentRecord rec = new_tree_block_extent(t.transid(), ref.level, ref.owner, skinny, first);
    std::vector<u8> item = encode_extent_item(rec);
    Key key = tree_block_extent_key(bytenr, ref.level, t.nodesize(), skinny);
    // A block of this transaction whose item an earlier round inserted,
    // freed and allocated again since (the allocator reuses such blocks
    // first) before its drop was applied: that item is this key. It
    // becomes the new one in place, and the drop is cancelled. (Inserting
    // failed with "already exists": convert of an 8 TiB 4K-node image, an
    // extent leaf merged away in a commit's drop phase and taken by the
    // next copy.) A skinny key differs with another level: the drop stays;
    // the old form's key (offset nodesize) does not, whatever the level.
    auto d = drops_.find(bytenr);
    if (d != drops_.end() && (!skinny || d->second.level == ref.level)) {
      ctree::Path p;
      FSCTL_TRY_ASSIGN(auto found, ctree::find_tree_block_extent_for_write(t, *ext, bytenr, d->second.level, p));
      if (!found || *found != key || p.item_data().size() != item.size())
        return make_error(Errc::corrupt, "extent item of tree block " + std::to_string(bytenr) + ", freed and allocated again, vanished");
      FSCTL_TRY(store_extent_item(ctree::item_data_mut(t, p), rec));
      drops_.erase(d);
    } else {
      FSCTL_TRY(ctree::insert_item(t, *ext, key, item));
    }
  }
  return {};
}

}  // namespace fsctl::transaction
