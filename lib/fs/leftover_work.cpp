// SPDX-License-Identifier: GPL-2.0-only
// Unfinished kernel work in the root tree (see leftover_work.h).
#include "lib/fs/leftover_work.h"

#include "lib/ctree/search.h"
#include "lib/format/balance_item.h"
#include "lib/format/key.h"

namespace fsctl::fs {
using namespace fsctl::format;

namespace {

std::string id_list(const std::vector<u64>& ids) {
  std::string out;
  for (u64 id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

}  // namespace

Result<LeftoverWork> find_leftover_work(FsInfo& fs) {
  LeftoverWork work;
  FSCTL_TRY_ASSIGN(auto item, ctree::lookup_item(fs, fs.tree_root(), Key{BALANCE_OBJECTID, KeyType::TEMPORARY_ITEM, 0}));
  if (item) {
    auto decoded = decode_balance_item(*item);
    if (!decoded)
      return make_error(Errc::corrupt, "root tree BALANCE_ITEM: " + decoded.error().message);
    work.balance_flags = decoded->flags;
  }
  for (const auto& e : fs.root_entries()) {
    if (e.key.objectid == TREE_RELOC_OBJECTID && e.key.type == KeyType::ROOT_ITEM)
      work.relocation_trees.push_back(e.key.offset);
    else if (is_fstree(e.key.objectid) && e.item.refs == 0)
      work.dropping.push_back({e.key.objectid, e.item.drop_progress.objectid != 0, e.item.drop_level});
  }
  return work;
}

std::vector<std::string> describe_leftover_work(const LeftoverWork& work) {
  std::vector<std::string> out;
  if (work.balance_flags)
    out.push_back("a kernel balance of " + balance_types_to_string(*work.balance_flags) +
                  " block groups is paused or was interrupted (BALANCE_ITEM in the root tree): the next read-write "
                  "mount resumes it unless mounted with -o skip_balance");
  if (!work.relocation_trees.empty())
    out.push_back(std::string(work.relocation_trees.size() == 1 ? "the relocation tree of subvolume "
                                                                : "relocation trees of subvolumes ") +
                  id_list(work.relocation_trees) + " remain" + (work.relocation_trees.size() == 1 ? "s" : "") +
                  " (ROOT_ITEM (TREE_RELOC ROOT_ITEM <subvolume>) in the root tree), left by an interrupted kernel balance, device remove or shrink: the next read-write mount "
                  "merges or drops them (fsctl balance cancel drops them offline)");
  if (!work.dropping.empty()) {
    std::vector<u64> ids;
    for (const auto& d : work.dropping) ids.push_back(d.root_id);
    out.push_back(std::string(ids.size() == 1 ? "subvolume " : "subvolumes ") + id_list(ids) +
                  (ids.size() == 1 ? " is" : " are") +
                  " being deleted (ROOT_ITEM refs 0): the kernel's cleaner finishes the drop after the next mount "
                  "(fsctl rescue finish-drop does it offline)");
  }
  return out;
}

}  // namespace fsctl::fs
