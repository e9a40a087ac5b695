// SPDX-License-Identifier: GPL-2.0-only
// The one rule for which tree holds a BLOCK_GROUP_ITEM (kernel
// btrfs_block_group_root; btrfs-progs read_converting_block_groups).
#include "lib/ctree/block_group_lookup.h"

#include "lib/ctree/search.h"
#include "lib/format/names.h"

namespace fsctl::ctree {
using namespace fsctl::format;

std::vector<RootRef> block_group_item_trees(const BlockGroupTrees& trees) {
  std::vector<RootRef> out;
  if (trees.block_group_tree) out.push_back(*trees.block_group_tree);
  if (trees.extent_tree && (!trees.block_group_tree || trees.changing)) out.push_back(*trees.extent_tree);
  return out;
}

Result<std::optional<FoundBlockGroupItem>> find_block_group_item(BlockSource& src, const BlockGroupTrees& trees, u64 start,
                                                                 u64 length) {
  Key key{start, KeyType::BLOCK_GROUP_ITEM, length};
  auto decode = [&](const std::vector<u8>& bytes, u64 tree) -> Result<FoundBlockGroupItem> {
    auto item = decode_block_group_item(bytes);
    if (!item) return make_error(item.error().context(key_to_string(key) + " in the " + tree_name(tree)));
    return FoundBlockGroupItem{tree, *item};
  };
  std::optional<FoundBlockGroupItem> found;
  if (trees.block_group_tree) {
    auto r = lookup_item(src, *trees.block_group_tree, key);
    if (!r) return make_error(r.error().context("reading block group tree"));
    if (*r) {
      FSCTL_TRY_ASSIGN(found, decode(**r, BLOCK_GROUP_TREE_OBJECTID));
    }
  }
  if (trees.extent_tree && (!found || trees.changing)) {
    auto r = lookup_item(src, *trees.extent_tree, key);
    if (!r) return make_error(r.error().context("reading extent tree"));
    if (*r && found)
      return make_error(Errc::corrupt, "block group " + std::to_string(start) +
                                           " has an item in both the extent tree and the block group tree");
    if (*r) {
      FSCTL_TRY_ASSIGN(found, decode(**r, EXTENT_TREE_OBJECTID));
    }
  }
  return found;
}

}  // namespace fsctl::ctree
