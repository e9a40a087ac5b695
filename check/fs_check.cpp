// SPDX-License-Identifier: GPL-2.0-only
// fsctl check: extent items and free space of every tree block, free space
// entries inside block groups, block group item placement.
#include "check/fs_check.h"

#include <algorithm>
#include <functional>
#include <map>

#include "lib/ctree/search.h"
#include "lib/ctree/tree_block_extent.h"
#include "lib/ctree/tree_walk.h"
#include "lib/format/free_space.h"
#include "lib/format/items.h"
#include "lib/format/names.h"
#include "lib/format/super.h"

namespace fsctl::check {
using namespace fsctl::format;

namespace {

using Problem = std::function<void(bool, std::string)>;

// Every block of `roots`, each once, sorted by bytenr. A block no mirror can
// give stops the walk of its tree only: the walk is redone tree by tree, the
// unreadable tree named as a problem and counted in trees_incomplete, and
// every other tree checked in full. Errors: only those that are not about
// reading a block (the visitor's own).
Result<std::vector<std::pair<u64, u8>>> walk_every_tree(fs::FsInfo& fs, const std::vector<ctree::RootRef>& roots,
                                                       FsCheckReport& rep) {
  std::vector<std::pair<u64, u8>> blocks;
  auto collect = [&](const cache::TreeBlockRef& b, u32) -> Status {
    blocks.push_back({b->bytenr, b->view().level()});
    return {};
  };
  ctree::RootSets sets;
  if (ctree::walk_trees(fs, roots, sets, collect)) {
    std::sort(blocks.begin(), blocks.end());
    return blocks;
  }
  blocks.clear();
  for (const auto& root : roots) {
    ctree::RootSets one;
    if (auto st = ctree::walk_trees(fs, {root}, one, collect); !st) {
      rep.problems.push_back({true, "tree " + tree_name(root.root_id) + ": " + st.error().message +
                                        "; the blocks of this tree below it were not checked"});
      rep.trees_incomplete++;
    }
  }
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  return blocks;
}

// Whether the extent tree has the extent item of a tree block, in either
// form (lib/ctree/tree_block_extent.h). Errors: reading the extent tree.
Result<bool> has_extent_item(fs::FsInfo& fs, const ctree::RootRef& ext, u64 bytenr, u8 level) {
  ctree::Path p;
  FSCTL_TRY_ASSIGN(auto key, ctree::find_tree_block_extent(fs, ext, bytenr, level, fs.nodesize(), p));
  return key.has_value();
}

// A tree block is not listed free and lies in a metadata or system group.
void check_placement(fs::FsInfo& fs, u64 bytenr, const std::function<bool(u64, u64)>& is_free, const Problem& problem) {
  if (is_free(bytenr, fs.nodesize())) problem(true, "tree block " + std::to_string(bytenr) + " is listed as free in the free space tree");
  const fs::BlockGroup* bg = fs.block_group_of(bytenr);
  if (!bg || !(bg->flags & (BLOCK_GROUP_METADATA | BLOCK_GROUP_SYSTEM)))
    problem(true, "tree block " + std::to_string(bytenr) + " lies outside every metadata block group");
}

}  // namespace

Result<FsCheckReport> check_filesystem(fs::FsInfo& fs) {
  FsCheckReport rep;
  const auto& bgs = fs.block_groups();
  rep.block_groups = bgs.size();
  auto problem = [&](bool error, std::string m) { rep.problems.push_back({error, std::move(m)}); };

  // Free space tree: every entry inside a block group; remember the free ranges.
  std::map<u64, u64> free_ranges;  // start -> end
  u64 stale = 0;
  std::string first_stale;
  if (auto fst = fs.find_root(FREE_SPACE_TREE_OBJECTID)) {
    u32 ss = fs.sectorsize();
    auto walked = ctree::for_each_item(fs, *fst, {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
      Key k = leaf.item_key(slot);
      if (k.type != KeyType::FREE_SPACE_INFO && k.type != KeyType::FREE_SPACE_EXTENT && k.type != KeyType::FREE_SPACE_BITMAP)
        return ctree::Visit::next;
      rep.free_space_items++;
      const fs::BlockGroup* bg = fs.block_group_of(k.objectid);
      if (!bg || k.objectid + k.offset > bg->start + bg->length) {
        if (stale++ == 0) first_stale = key_to_string(k) + " in leaf " + std::to_string(leaf.bytenr());
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
    });
    // A free space tree block that cannot be read: the entries after it are
    // not checked, and blocks they list free are not found.
    if (!walked) problem(true, "free space tree: " + walked.error().message + "; its entries after that block were not checked");
  }
  if (stale)
    rep.notes.push_back(std::to_string(stale) + " free space tree item" + (stale == 1 ? " lies" : "s lie") +
                        " outside every block group (first: " + first_stale +
                        "): stale entries such as mkfs.btrfs 6.2 leaves for its removed temporary chunks; the kernel "
                        "and btrfs check ignore them and fsctl never allocates there");
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
  FSCTL_TRY_ASSIGN(auto blocks, walk_every_tree(fs, roots, rep));
  rep.tree_blocks = blocks.size();
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    auto [bytenr, level] = blocks[i];
    auto found = has_extent_item(fs, *ext, bytenr, level);
    if (!found) {
      // The extent tree itself cannot be read there: say so once, carry on
      // with what needs no extent tree.
      problem(true, "extent tree: " + found.error().message + "; the extent items of " + std::to_string(blocks.size() - i) +
                        " tree blocks were not checked");
      for (; i < blocks.size(); ++i) check_placement(fs, blocks[i].first, is_free, problem);
      break;
    }
    if (!*found) problem(true, "tree block " + std::to_string(bytenr) + " (level " + std::to_string(level) + ") has no extent item");
    check_placement(fs, bytenr, is_free, problem);
  }
  rep.bad_copies = fs.bad_copies_read();
  return rep;
}

}  // namespace fsctl::check
