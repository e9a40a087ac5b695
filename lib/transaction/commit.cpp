// SPDX-License-Identifier: GPL-2.0-only
// Commit (kernel btrfs_commit_transaction; DESIGN.md invariants 2 and 3):
// fixed point of extent items, free space, block group usage and root items,
// then new blocks to every mirror, flush, superblocks, flush. New chunks'
// items are inserted from the top of the fixed point (chunk.cpp).
#include <algorithm>

#include "lib/ctree/write.h"
#include "lib/format/backup_root.h"
#include "lib/format/qgroup_items.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

Result<bool> Transaction::commit_round() {
  bool work = !refs_.empty() || !fst_.empty() || !usage_.empty() || chunks_.pending();
  FSCTL_TRY(chunks_.insert_pending(*this));
  FSCTL_TRY(refs_.apply_drops(*this));
  FSCTL_TRY(refs_.apply_adds(*this));
  FSCTL_TRY(fst_.apply(*this));
  FSCTL_TRY(usage_.apply(*this));
  FSCTL_TRY(roots_.apply(*this));
  return work || !refs_.empty() || !fst_.empty() || !usage_.empty() || chunks_.pending();
}

Status Transaction::commit(const SuperChanges& super) {
  if (stop_ && stop_->now()) return make_error(Errc::aborted, "interrupted");
  FSCTL_TRY(update_qgroup_status_generation());
  // The root tree's root block must carry the new generation (the kernel
  // reads it expecting the superblock's generation), so every commit copies
  // it, even one that only changes superblock flags.
  {
    FSCTL_TRY_ASSIGN(auto* rt, root(ROOT_TREE_OBJECTID));
    ctree::Path p;
    FSCTL_TRY(ctree::search_slot_for_write(*this, *rt, Key{}, 0, p));
  }
  // The fixed point: every part's changes make more changes in the trees
  // (new blocks need extent items and free space, ...), until a round
  // changes nothing.
  for (int round = 0;; ++round) {
    if (round > 10000) return make_error(Errc::aborted, "commit did not reach a fixed point");
    FSCTL_TRY_ASSIGN(bool changed, commit_round());
    if (!changed) break;
  }
  FSCTL_TRY_ASSIGN(SuperBlock sb, new_super(super));

  std::vector<std::shared_ptr<cache::TreeBlock>> blocks;
  blocks.reserve(dirty_.size());
  for (auto& [bytenr, blk] : dirty_) blocks.push_back(blk);
  sort_by_bytenr(blocks);
  stats_.blocks_written += blocks.size();
  FSCTL_TRY(fs_.write_tree_blocks(std::move(blocks)));
  // Each device's superblock carries its own DEV_ITEM (write_supers copies
  // FsInfo's); the saved volume state puts the old ones back on failure.
  chunks_.publish_dev_items(fs_);
  FSCTL_TRY(fs_.write_supers(sb));
  committed_ = true;
  dirty_.clear();
  written_early_.clear();
  fs_.cache().set_outside_bytes(0);
  // The committed blocks this transaction copied or freed are unreferenced
  // now: drop them from the cache, which then holds the new generation of
  // the changed blocks instead of both.
  for (u64 b : alloc_.pinned()) fs_.cache().erase(b);
  FSCTL_TRY(fs_.reload_roots());
  usage_.committed(fs_);
  if (chunks_.changed_volumes()) FSCTL_TRY(fs_.reload_chunks());
  fs_.notify_commit({.transid = transid_, .reserved_bytes = reserved_, .used_bytes = stats_.used_bytes,
                     .blocks_written = stats_.blocks_written});
  return {};
}

Result<SuperBlock> Transaction::new_super(const SuperChanges& super) const {
  FSCTL_TRY_ASSIGN(SuperBlock sb, chunks_.updated_sys_chunk_array(fs_.super()));
  const auto& roots = roots_.all();
  // The chunk tree's root lives in the superblock only (no ROOT_ITEM).
  if (auto it = roots.find(CHUNK_TREE_OBJECTID); it != roots.end() && it->second.bytenr != sb.chunk_root.get()) {
    sb.chunk_root.set(it->second.bytenr);
    sb.chunk_root_level = it->second.level;
    sb.chunk_root_generation.set(it->second.generation);
  }
  sb.generation.set(transid_);
  if (auto it = roots.find(ROOT_TREE_OBJECTID); it != roots.end()) {
    sb.root.set(it->second.bytenr);
    sb.root_level = it->second.level;
  }
  sb.bytes_used.set(static_cast<u64>(static_cast<s64>(sb.bytes_used.get()) + bytes_used_delta_));
  sb.flags.set((sb.flags.get() | super.flags_set) & ~super.flags_clear);
  sb.compat_ro_flags.set((sb.compat_ro_flags.get() | super.compat_ro_set) & ~super.compat_ro_clear);
  // A RAID1C3/RAID1C4 chunk needs the RAID1C34 incompat bit (kernel
  // volumes.c check_raid1c34_incompat_flag, set when such a chunk is made).
  sb.incompat_flags.set(sb.incompat_flags.get() | super.incompat_set | chunks_.incompat_needed());
  // The kernel rescans the uuid tree at mount when this lags the generation;
  // keep it current when it was (this engine does not change the uuid tree).
  if (sb.uuid_tree_generation.get() == fs_.super().generation.get()) sb.uuid_tree_generation.set(transid_);

  // Backup roots: the slot after the newest one (kernel backup_super_roots).
  BackupRootRecord b;
  auto fill = [&](u64 id, u64& bytenr, u64& gen, u8& level) {
    std::optional<ctree::RootRef> r;
    if (auto it = roots.find(id); it != roots.end())
      r = ctree::RootRef{id, it->second.bytenr, it->second.level, it->second.generation};
    else
      r = fs_.find_root(id);
    if (!r) return;
    bytenr = r->bytenr;
    gen = r->generation;
    level = r->level;
  };
  b.tree_root = sb.root.get();
  b.tree_root_gen = transid_;
  b.tree_root_level = sb.root_level;
  b.chunk_root = sb.chunk_root.get();
  b.chunk_root_gen = sb.chunk_root_generation.get();
  b.chunk_root_level = sb.chunk_root_level;
  fill(EXTENT_TREE_OBJECTID, b.extent_root, b.extent_root_gen, b.extent_root_level);
  fill(FS_TREE_OBJECTID, b.fs_root, b.fs_root_gen, b.fs_root_level);
  fill(DEV_TREE_OBJECTID, b.dev_root, b.dev_root_gen, b.dev_root_level);
  fill(CSUM_TREE_OBJECTID, b.csum_root, b.csum_root_gen, b.csum_root_level);
  b.total_bytes = sb.total_bytes.get();
  b.bytes_used = sb.bytes_used.get();
  b.num_devices = sb.num_devices.get();
  store_backup_root(sb, next_backup_root_slot(sb), b);
  return sb;
}

Status Transaction::update_qgroup_status_generation() {
  // With quota on, the kernel marks qgroups inconsistent at mount when the
  // status item's generation differs from the filesystem's (kernel
  // btrfs_read_qgroup_config), and every kernel commit rewrites it.
  // A quota tree this transaction deletes (quota disable) has no status.
  if (!fs_.find_root(QUOTA_TREE_OBJECTID) || roots_.deleted(QUOTA_TREE_OBJECTID)) return {};
  FSCTL_TRY_ASSIGN(auto* q, root(QUOTA_TREE_OBJECTID));
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(*this, *q, Key{0, KeyType::QGROUP_STATUS, 0}, 0, p));
  if (!exact) return {};
  auto d = ctree::item_data_mut(*this, p);
  auto status = decode_qgroup_status(d);
  if (!status) return make_error(status.error().context("quota tree"));
  status->generation = transid_;
  FSCTL_TRY(store_qgroup_status(d, *status));
  return {};
}

}  // namespace fsctl::transaction
