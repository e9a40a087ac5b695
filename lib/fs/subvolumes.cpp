// SPDX-License-Identifier: GPL-2.0-only
// Subvolume path resolution for `qgroup show` (btrfs-progs prints the same).
#include "lib/fs/subvolumes.h"

#include <functional>

#include "lib/ctree/search.h"
#include "lib/format/inode_items.h"
#include "lib/format/root_ref.h"

namespace fsctl::fs {
using namespace fsctl::format;

namespace {
struct BackRef {
  u64 parent = 0, dirid = 0;
  std::string name;
};

// Directory path of inode `dirid` inside tree `root` ("" for the tree's root dir 256).
Result<std::string> dir_path(FsInfo& fs, const ctree::RootRef& root, u64 dirid) {
  std::string path;
  for (int depth = 0; dirid != FIRST_FREE_OBJECTID; ++depth) {
    if (depth > 4096) return make_error(Errc::corrupt, "directory loop at inode " + std::to_string(dirid));
    std::optional<std::pair<u64, std::string>> ref;
    FSCTL_TRY(ctree::for_each_item(fs, root, {{dirid, KeyType::INODE_REF, 0}, {dirid, KeyType::INODE_REF, ~0ULL}},
                                   [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
                                     FSCTL_TRY_ASSIGN(auto names, decode_inode_refs(leaf.item_data(slot), false));
                                     if (names.empty()) return make_error(Errc::corrupt, "empty inode ref");
                                     ref = {leaf.item_key(slot).offset, std::string(names[0].name.begin(), names[0].name.end())};
                                     return ctree::Visit::stop;
                                   }));
    if (!ref) return make_error(Errc::not_found, "no INODE_REF for directory " + std::to_string(dirid));
    path = path.empty() ? ref->second : ref->second + "/" + path;
    if (ref->first == dirid) break;
    dirid = ref->first;
  }
  return path;
}
}  // namespace

Result<std::map<u64, std::string>> subvolume_paths(FsInfo& fs) {
  std::map<u64, BackRef> refs;
  FSCTL_TRY(ctree::for_each_item(fs, fs.tree_root(), {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
    Key k = leaf.item_key(slot);
    if (k.type != KeyType::ROOT_BACKREF) return ctree::Visit::next;
    auto r = decode_root_ref(leaf.item_data(slot));
    if (!r) return make_error(r.error().context("ROOT_BACKREF in leaf " + std::to_string(leaf.bytenr())));
    BackRef b;
    b.parent = k.offset;
    b.dirid = r->dirid;
    b.name.assign(r->name.begin(), r->name.end());
    refs[k.objectid] = b;
    return ctree::Visit::next;
  }));
  std::map<u64, std::string> out;
  out[FS_TREE_OBJECTID] = "";
  std::function<Result<std::string>(u64, int)> resolve = [&](u64 id, int depth) -> Result<std::string> {
    if (auto it = out.find(id); it != out.end()) return it->second;
    if (depth > 4096) return make_error(Errc::corrupt, "subvolume back references form a loop at " + std::to_string(id));
    auto it = refs.find(id);
    if (it == refs.end()) return make_error(Errc::not_found, "no back reference");
    FSCTL_TRY_ASSIGN(std::string parent_path, resolve(it->second.parent, depth + 1));
    auto proot = fs.find_root(it->second.parent);
    if (!proot) return make_error(Errc::not_found, "parent subvolume " + std::to_string(it->second.parent) + " is gone");
    FSCTL_TRY_ASSIGN(std::string dir, dir_path(fs, *proot, it->second.dirid));
    std::string p = parent_path;
    for (const std::string& part : {dir, it->second.name}) {
      if (part.empty()) continue;
      p = p.empty() ? part : p + "/" + part;
    }
    out[id] = p;
    return p;
  };
  for (auto& [id, b] : refs) {
    auto r = resolve(id, 0);
    if (!r && r.error().code != Errc::not_found) return make_error(r.error());
  }
  return out;
}

}  // namespace fsctl::fs
