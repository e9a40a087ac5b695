// SPDX-License-Identifier: GPL-2.0-only
// Canonical dumps of every tree, for comparing crash-test states.
#include "tests/unit/jobs/support/tree_dump.h"

#include <algorithm>
#include <cstddef>
#include <set>

#include "lib/ctree/search.h"
#include "lib/format/extent_item.h"
#include "lib/format/items.h"

namespace fsctl::testing {
using namespace fsctl::format;

namespace {

std::string key_str(u64 tree, const Key& k) {
  return "tree " + std::to_string(tree) + " (" + std::to_string(k.objectid) + " " + std::to_string(k.type) + " " +
         std::to_string(k.offset) + ")";
}

std::string hex_bytes(const std::vector<u8>& d) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < d.size() && i < 96; ++i) {
    s += digits[d[i] >> 4];
    s += digits[d[i] & 15];
  }
  if (d.size() > 96) s += "...";
  return s;
}

void zero(std::vector<u8>& d, std::size_t offset, std::size_t len) {
  for (std::size_t i = offset; i < offset + len && i < d.size(); ++i) d[i] = 0;
}

/// A data EXTENT_ITEM without the bytenrs of tree blocks: its refs,
/// generation and flags and its inline refs with SHARED_DATA_REF parents
/// (leaves with full backrefs, which balance moves) left out, sorted (the
/// kernel orders shared refs by parent). Raw bytes if it does not decode.
std::vector<u8> data_extent_without_parents(const Key& k, std::vector<u8> d) {
  auto rec = decode_extent_item(k, d);
  if (!rec) return d;
  std::vector<std::string> refs;
  for (auto& r : rec->inline_refs)
    refs.push_back(std::to_string(r.type) + "/" + std::to_string(r.root) + "/" + std::to_string(r.objectid) + "/" +
                   std::to_string(r.offset) + "/" + std::to_string(r.count));
  std::sort(refs.begin(), refs.end());
  std::string s = "refs " + std::to_string(rec->refs) + " generation " + std::to_string(rec->generation) + " flags " +
                  std::to_string(rec->flags);
  for (auto& r : refs) s += " " + r;
  return std::vector<u8>(s.begin(), s.end());
}

/// Whether an item stays in a placement_free dump, and its bytes masked.
bool keep_placement_free(u64 tree, const Key& k, std::vector<u8>& d) {
  switch (tree) {
    case CHUNK_TREE_OBJECTID:
    case DEV_TREE_OBJECTID:
    case FREE_SPACE_TREE_OBJECTID:
    case BLOCK_GROUP_TREE_OBJECTID:
      return false;
    case EXTENT_TREE_OBJECTID:
      // Tree blocks' items and keyed refs name where blocks are; data
      // extents stay, except keyed full backrefs naming a leaf's bytenr.
      if (k.type == KeyType::METADATA_ITEM || k.type == KeyType::TREE_BLOCK_REF || k.type == KeyType::SHARED_BLOCK_REF ||
          k.type == KeyType::BLOCK_GROUP_ITEM || k.type == KeyType::SHARED_DATA_REF)
        return false;
      if (k.type == KeyType::EXTENT_ITEM) d = data_extent_without_parents(k, std::move(d));
      return true;
    case ROOT_TREE_OBJECTID:
      if (k.type == KeyType::ROOT_ITEM) {
        zero(d, offsetof(RootItem, generation), 8);
        zero(d, offsetof(RootItem, bytenr), 8);
        zero(d, offsetof(RootItem, level), 1);
        zero(d, offsetof(RootItem, generation_v2), 8);
      }
      return true;
    case QUOTA_TREE_OBJECTID:
      if (k.type == KeyType::QGROUP_STATUS) zero(d, 8, 8);  // btrfs_qgroup_status_item.generation (after version)
      return true;
    default:
      return true;
  }
}

Status dump_tree(fs::FsInfo& fs, const ctree::RootRef& root, DumpMode mode, TreeDump& out) {
  return ctree::for_each_item(fs, root, {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
    Key k = leaf.item_key(slot);
    auto bytes = leaf.item_data(slot);
    std::vector<u8> d(bytes.begin(), bytes.end());
    if (mode == DumpMode::placement_free && !keep_placement_free(root.root_id, k, d)) return ctree::Visit::next;
    out.items[{root.root_id, k}] = std::move(d);
    return ctree::Visit::next;
  });
}

}  // namespace

Result<TreeDump> dump_trees(fs::FsInfo& fs, DumpMode mode) {
  TreeDump out;
  const SuperBlock& sb = fs.super();
  out.generation = sb.generation.get();
  out.super = "flags " + std::to_string(sb.flags.get()) + " compat_ro " + std::to_string(sb.compat_ro_flags.get()) +
              " incompat " + std::to_string(sb.incompat_flags.get());
  if (mode == DumpMode::exact)
    out.super = "generation " + std::to_string(out.generation) + " " + out.super + " bytes_used " + std::to_string(sb.bytes_used.get());
  std::vector<ctree::RootRef> roots{fs.tree_root(), fs.chunk_root()};
  std::set<u64> seen;
  for (auto& e : fs.root_entries())
    if (seen.insert(e.key.objectid).second)
      if (auto r = fs.find_root(e.key.objectid)) roots.push_back(*r);
  for (auto& r : roots)
    if (auto st = dump_tree(fs, r, mode, out); !st) return make_error(st.error().context("dumping tree " + std::to_string(r.root_id)));
  return out;
}

std::string describe_difference(const TreeDump& a, const TreeDump& b, std::size_t max) {
  std::string s;
  std::size_t n = 0;
  auto line = [&](const std::string& l) {
    if (n++ < max) s += l + "\n";
  };
  if (a.super != b.super) line("superblock: " + a.super + " | " + b.super);
  for (auto& [k, v] : a.items) {
    auto it = b.items.find(k);
    if (it == b.items.end())
      line("only in the first: " + key_str(std::get<0>(k), std::get<1>(k)));
    else if (it->second != v)
      line("bytes differ: " + key_str(std::get<0>(k), std::get<1>(k)) + ": " + hex_bytes(v) + " | " + hex_bytes(it->second));
  }
  for (auto& [k, v] : b.items)
    if (!a.items.count(k)) line("only in the second: " + key_str(std::get<0>(k), std::get<1>(k)));
  if (n > max) s += "... " + std::to_string(n - max) + " more\n";
  return s;
}

}  // namespace fsctl::testing
