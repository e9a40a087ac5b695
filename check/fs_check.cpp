// SPDX-License-Identifier: GPL-2.0-only
// fsctl check: extent items and free space of every tree block, free space
// entries inside block groups, block group item placement.
#include "check/fs_check.h"

#include <algorithm>
#include <map>

#include "lib/ctree/search.h"
#include "lib/ctree/tree_walk.h"
#include "lib/format/free_space.h"
#include "lib/format/items.h"
#include "lib/format/names.h"
#include "lib/format/super.h"

namespace fsctl::check {
using namespace fsctl::format;

Result<FsCheckReport> check_filesystem(fs::FsInfo& fs) {
  FsCheckReport rep;
  const auto& bgs = fs.block_groups();
  rep.block_groups = bgs.size();
  auto problem = [&](bool error, std::string m) { rep.problems.push_back({error, std::move(m)}); };

  // Free space tree: every entry inside a block group; remember the free ranges.
  std::map<u64, u64> free_ranges;  // start -> end
  if (auto fst = fs.find_root(FREE_SPACE_TREE_OBJECTID)) {
    u32 ss = fs.sectorsize();
    FSCTL_TRY(ctree::for_each_item(fs, *fst, {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
      Key k = leaf.item_key(slot);
      if (k.type != KeyType::FREE_SPACE_INFO && k.type != KeyType::FREE_SPACE_EXTENT && k.type != KeyType::FREE_SPACE_BITMAP)
        return ctree::Visit::next;
      rep.free_space_items++;
      const fs::BlockGroup* bg = fs.block_group_of(k.objectid);
      if (!bg || k.objectid + k.offset > bg->start + bg->length) {
        problem(false, "free space tree item " + key_to_string(k) + " in leaf " + std::to_string(leaf.bytenr()) +
                           " lies outside every block group (stale entry, e.g. from mkfs.btrfs 6.2's removed temporary chunks); fsctl never allocates there");
        return ctree::Visit::next;
      }
      if (k.type == KeyType::FREE_SPACE_INFO && (k.objectid != bg->start || k.offset != bg->length))
        problem(true, "FREE_SPACE_INFO " + key_to_string(k) + " does not match block group " + std::to_string(bg->start) +
                          " length " + std::to_string(bg->length));
      if (k.type == KeyType::FREE_SPACE_EXTENT) free_ranges[k.objectid] = k.objectid + k.offset;
      if (k.type == KeyType::FREE_SPACE_BITMAP) {
        auto r = for_each_free_run(k, leaf.item_data(slot), ss, [&](u64 start, u64 len) { free_ranges[start] = start + len; });
        if (!r) problem(true, r.error().message + " (leaf " + std::to_string(leaf.bytenr()) + ")");
      }
      return ctree::Visit::next;
    }));
  }
  auto is_free = [&](u64 a, u64 len) {
    auto it = free_ranges.upper_bound(a + len - 1);
    if (it == free_ranges.begin()) return false;
    --it;
    return it->second > a;  // the range starting at or before the block's end overlaps it
  };

  // Block group items where the conversion state says they may be.
  const auto& st = fs.bg_tree_state();
  for (auto& bg : bgs) {
    bool in_bgt = bg.item_tree == BLOCK_GROUP_TREE_OBJECTID;
    if (!st.changing && in_bgt != st.has_bg_tree_bit)
      problem(true, "block group " + std::to_string(bg.start) + " has its item in the " + tree_name(bg.item_tree) +
                        " but the superblock says " + st.describe());
  }

  // Every tree block: an extent item, and not free.
  std::vector<ctree::RootRef> roots{fs.tree_root(), fs.chunk_root()};
  for (auto& e : fs.root_entries())
    if (e.item.refs > 0 || !is_fstree(e.key.objectid)) roots.push_back({e.key.objectid, e.item.bytenr, e.item.level, e.item.generation});
  auto ext = fs.find_root(EXTENT_TREE_OBJECTID);
  if (!ext) return make_error(Errc::corrupt, "no extent tree");
  bool skinny = fs.super().incompat_flags.get() & INCOMPAT_SKINNY_METADATA;
  std::vector<std::pair<u64, u8>> blocks;
  ctree::RootSets sets;
  FSCTL_TRY(ctree::walk_trees(fs, roots, sets, [&](const cache::TreeBlockRef& b, u32) -> Status {
    blocks.push_back({b->bytenr, b->view().level()});
    return {};
  }));
  rep.tree_blocks = blocks.size();
  std::sort(blocks.begin(), blocks.end());
  u32 ns = fs.nodesize();
  for (auto [bytenr, level] : blocks) {
    bool found = false;
    if (skinny) {
      FSCTL_TRY_ASSIGN(auto item, ctree::lookup_item(fs, *ext, Key{bytenr, KeyType::METADATA_ITEM, level}));
      found = item.has_value();
    }
    if (!found) {
      FSCTL_TRY_ASSIGN(auto item, ctree::lookup_item(fs, *ext, Key{bytenr, KeyType::EXTENT_ITEM, ns}));
      found = item.has_value();
    }
    if (!found) problem(true, "tree block " + std::to_string(bytenr) + " (level " + std::to_string(level) + ") has no extent item");
    if (is_free(bytenr, ns)) problem(true, "tree block " + std::to_string(bytenr) + " is listed as free in the free space tree");
    const fs::BlockGroup* bg = fs.block_group_of(bytenr);
    if (!bg || !(bg->flags & (BLOCK_GROUP_METADATA | BLOCK_GROUP_SYSTEM)))
      problem(true, "tree block " + std::to_string(bytenr) + " lies outside every metadata block group");
  }
  return rep;
}

}  // namespace fsctl::check
