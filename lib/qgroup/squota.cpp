// SPDX-License-Identifier: GPL-2.0-only
// Simple-quota numbers (squota, kernel 6.7+): each extent is charged once, to
// the subvolume that owns it, from the transid quota was enabled in on
// (kernel qgroup.c btrfs_record_squota_delta; its callers in extent-tree.c
// charge a new data extent to its owning root, recorded in the
// EXTENT_OWNER_REF inline ref, and a new tree block to the root that
// allocates it, its header owner; a freed extent is uncharged from the same
// root if its extent item's generation is not older than enable_gen).
// No sharing accounting: referenced = exclusive. Invariant 7: relocation
// keeps owner refs, header owners and generations, hence these numbers.
#include <chrono>
#include <map>

#include "lib/ctree/tree_walk.h"
#include "lib/format/extent_item.h"
#include "lib/qgroup/qgroup.h"

namespace fsctl::qgroup {
using namespace fsctl::format;

namespace {

/// What the extent tree says: bytes of data charged per owner, and the tree
/// blocks whose owner their headers tell.
struct ExtentScan {
  std::map<u64, u64> charged;                    // bytes by subvolume id
  std::vector<ctree::BlockRequest> tree_blocks;  // born at or after enable_gen
  u64 extent_tree_blocks = 0;
};

Status scan_extent_item(const NodeView& leaf, u32 slot, u64 enable_gen, ExtentScan& scan, Computed& out) {
  Key k = leaf.item_key(slot);
  if (k.type != KeyType::EXTENT_ITEM && k.type != KeyType::METADATA_ITEM) return {};
  auto rec = decode_extent_item(k, leaf.item_data(slot));
  if (!rec)
    return make_error(rec.error().context("extent item (" + key_to_string(k) + ") in extent tree leaf " +
                                          std::to_string(leaf.bytenr()) + " slot " + std::to_string(slot)));
  if (rec->generation < enable_gen) {
    out.extents_before_enable++;
    return {};
  }
  if (k.type == KeyType::METADATA_ITEM || (rec->flags & EXTENT_FLAG_TREE_BLOCK)) {
    ctree::BlockRequest req;
    req.bytenr = k.objectid;
    req.check.level = rec->level;
    scan.tree_blocks.push_back(req);
    return {};
  }
  auto owner = extent_owner_root(*rec);
  if (!owner) {
    out.data_extents_unowned++;
    return {};
  }
  if (!is_fstree(*owner)) return {};
  scan.charged[*owner] += k.offset;  // disk num_bytes
  out.data_extents++;
  return {};
}

void report(ProgressObserver* progress, u64 blocks, u32 nodesize) {
  if (!progress) return;
  ProgressCounts c;
  c.tree_blocks_done = blocks;
  c.bytes_done = blocks * nodesize;
  progress->on_progress(c);
}

}  // namespace

Result<Computed> compute_squota(fs::FsInfo& fs, const QuotaState& quota, ProgressObserver* progress) {
  auto t0 = std::chrono::steady_clock::now();
  Computed out;
  out.simple = true;
  out.enable_gen = quota.squota_enable_gen();
  out.subvols = subvolume_roots(fs);
  auto extent_root = fs.find_root(EXTENT_TREE_OBJECTID);
  if (!extent_root) return make_error(Errc::corrupt, "no extent tree root item");
  const u32 ns = fs.nodesize();

  // One streaming pass over the extent tree: data extents are charged here,
  // tree blocks need their headers.
  ExtentScan scan;
  ctree::RootSets sets;
  FSCTL_TRY(with_context(ctree::walk_trees(fs, {*extent_root}, sets, [&](const cache::TreeBlockRef& b, u32) -> Status {
    NodeView v = b->view();
    report(progress, ++scan.extent_tree_blocks, ns);
    if (!v.is_leaf()) return {};
    for (u32 i = 0; i < v.nritems(); ++i) FSCTL_TRY(scan_extent_item(v, i, out.enable_gen, scan, out));
    return {};
  }), "simple quotas: reading the extent tree"));

  // The owner of each counted tree block, read in physical order.
  FSCTL_TRY(with_context(fs.read_tree_blocks(std::move(scan.tree_blocks), [&](const cache::TreeBlockRef& b) -> Status {
    u64 owner = b->view().owner();
    report(progress, scan.extent_tree_blocks + out.tree_blocks + 1, ns);
    if (!is_fstree(owner)) return {};
    scan.charged[owner] += ns;
    out.tree_blocks++;
    return {};
  }), "simple quotas: reading tree block owners"));

  std::set<u64> qgroups;
  for (auto& [id, g] : quota.qgroups) qgroups.insert(id);
  for (auto& s : out.subvols) qgroups.insert(s.root_id);
  for (u64 q : qgroups) {
    QgroupCount c;
    for (u64 member : level0_members(quota, q)) {
      auto it = scan.charged.find(member);
      if (it != scan.charged.end()) c.rfer += it->second;
    }
    c.excl = c.rfer;
    // The compressed twins stay 0: btrfs_record_squota_delta changes only
    // rfer and excl (btrfs check 6.19 prints "disk: referenced compressed 0"
    // for every squota qgroup the kernel wrote).
    out.counts[q] = c;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace fsctl::qgroup
