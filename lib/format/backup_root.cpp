// SPDX-License-Identifier: GPL-2.0-only
// Backup root codec (kernel btrfs_tree.h struct btrfs_root_backup).
#include "lib/format/backup_root.h"

#include "lib/base/assert.h"

namespace fsctl::format {

BackupRootRecord load_backup_root(const SuperBlock& sb, int slot) {
  FSCTL_ASSERT(slot >= 0 && slot < NUM_BACKUP_ROOTS);
  const RootBackup& b = sb.super_roots[slot];
  BackupRootRecord r;
  r.tree_root = b.tree_root.get();
  r.tree_root_gen = b.tree_root_gen.get();
  r.chunk_root = b.chunk_root.get();
  r.chunk_root_gen = b.chunk_root_gen.get();
  r.extent_root = b.extent_root.get();
  r.extent_root_gen = b.extent_root_gen.get();
  r.fs_root = b.fs_root.get();
  r.fs_root_gen = b.fs_root_gen.get();
  r.dev_root = b.dev_root.get();
  r.dev_root_gen = b.dev_root_gen.get();
  r.csum_root = b.csum_root.get();
  r.csum_root_gen = b.csum_root_gen.get();
  r.total_bytes = b.total_bytes.get();
  r.bytes_used = b.bytes_used.get();
  r.num_devices = b.num_devices.get();
  r.tree_root_level = b.tree_root_level;
  r.chunk_root_level = b.chunk_root_level;
  r.extent_root_level = b.extent_root_level;
  r.fs_root_level = b.fs_root_level;
  r.dev_root_level = b.dev_root_level;
  r.csum_root_level = b.csum_root_level;
  return r;
}

void store_backup_root(SuperBlock& sb, int slot, const BackupRootRecord& r) {
  FSCTL_ASSERT(slot >= 0 && slot < NUM_BACKUP_ROOTS);
  RootBackup& b = sb.super_roots[slot];
  b = RootBackup{};
  b.tree_root.set(r.tree_root);
  b.tree_root_gen.set(r.tree_root_gen);
  b.chunk_root.set(r.chunk_root);
  b.chunk_root_gen.set(r.chunk_root_gen);
  b.extent_root.set(r.extent_root);
  b.extent_root_gen.set(r.extent_root_gen);
  b.fs_root.set(r.fs_root);
  b.fs_root_gen.set(r.fs_root_gen);
  b.dev_root.set(r.dev_root);
  b.dev_root_gen.set(r.dev_root_gen);
  b.csum_root.set(r.csum_root);
  b.csum_root_gen.set(r.csum_root_gen);
  b.total_bytes.set(r.total_bytes);
  b.bytes_used.set(r.bytes_used);
  b.num_devices.set(r.num_devices);
  b.tree_root_level = r.tree_root_level;
  b.chunk_root_level = r.chunk_root_level;
  b.extent_root_level = r.extent_root_level;
  b.fs_root_level = r.fs_root_level;
  b.dev_root_level = r.dev_root_level;
  b.csum_root_level = r.csum_root_level;
}

int next_backup_root_slot(const SuperBlock& sb) {
  int newest = 0;
  for (int i = 1; i < NUM_BACKUP_ROOTS; ++i)
    if (sb.super_roots[i].tree_root_gen.get() > sb.super_roots[newest].tree_root_gen.get()) newest = i;
  return sb.super_roots[newest].tree_root_gen.get() == 0 ? 0 : (newest + 1) % NUM_BACKUP_ROOTS;
}

}  // namespace fsctl::format
