// SPDX-License-Identifier: GPL-2.0-only
// The extent item of a tree block in either form (tree_block_extent.h).
#include "lib/ctree/tree_block_extent.h"

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"

namespace fsctl::ctree {
using namespace fsctl::format;

bool is_tree_block_extent(const Key& key, const ExtentRecord& rec, u32 nodesize) {
  if (key.type == KeyType::METADATA_ITEM) return true;
  return key.type == KeyType::EXTENT_ITEM && (rec.flags & EXTENT_FLAG_TREE_BLOCK) && key.offset == nodesize;
}

Result<std::optional<Key>> find_tree_block_extent(BlockSource& src, const RootRef& ext, u64 bytenr, u8 level, u32 nodesize,
                                                  Path& path) {
  // Skinny first: on a filesystem with SKINNY_METADATA new blocks have it,
  // and the kernel searches it first too.
  for (Key k : {Key{bytenr, KeyType::METADATA_ITEM, level}, Key{bytenr, KeyType::EXTENT_ITEM, nodesize}}) {
    path.release();
    FSCTL_TRY_ASSIGN(bool exact, search_slot(src, ext, k, path));
    if (exact) return k;
  }
  return std::nullopt;
}

Result<std::optional<Key>> find_tree_block_extent_for_write(TreeWriter& w, WriteRoot& ext, u64 bytenr, u8 level, Path& path) {
  FSCTL_TRY_ASSIGN(auto key, find_tree_block_extent(w, ext.ref(), bytenr, level, w.nodesize(), path));
  path.release();
  if (!key) return std::nullopt;
  FSCTL_TRY_ASSIGN(bool exact, search_slot_for_write(w, ext, *key, 0, path));
  if (!exact) return make_error(Errc::corrupt, "extent item " + key_to_string(*key) + " vanished between two searches");
  return key;
}

Result<std::optional<TreeBlockExtent>> read_tree_block_extent(BlockSource& src, const RootRef& ext, u64 bytenr, u8 level,
                                                              u32 nodesize) {
  Path p;
  FSCTL_TRY_ASSIGN(auto key, find_tree_block_extent(src, ext, bytenr, level, nodesize, p));
  if (!key) return std::nullopt;
  auto rec = decode_extent_item(*key, p.item_data());
  if (!rec) return make_error(rec.error().context("extent item " + key_to_string(*key) + " in extent tree leaf " +
                                                  std::to_string(p.leaf()->bytenr)));
  if (!is_tree_block_extent(*key, *rec, nodesize))
    return make_error(Errc::corrupt, "extent item " + key_to_string(*key) + " of tree block " + std::to_string(bytenr) +
                                         " lacks the TREE_BLOCK flag (flags " + std::to_string(rec->flags) + ")");
  return TreeBlockExtent{*key, std::move(*rec)};
}

}  // namespace fsctl::ctree
