// SPDX-License-Identifier: GPL-2.0-only
// Backup root codec: struct btrfs_root_backup (kernel btrfs_tree.h), the
// four slots of the superblock's super_roots[] that a commit rotates through
// (kernel disk-io.c backup_super_roots; btrfs-progs kernel-shared/disk-io.c
// the same): the roots of the tree, chunk, extent, fs, dev and csum trees
// with their generations and levels, and the superblock's byte counts.
#pragma once
#include "lib/base/ints.h"
#include "lib/format/super.h"

namespace fsctl::format {

/// One backup root slot in cpu form: every field of btrfs_root_backup but
/// the unused ones (written zero). Bytenrs are logical, byte counts bytes.
struct BackupRootRecord {
  u64 tree_root = 0, tree_root_gen = 0;
  u64 chunk_root = 0, chunk_root_gen = 0;
  u64 extent_root = 0, extent_root_gen = 0;
  u64 fs_root = 0, fs_root_gen = 0;
  u64 dev_root = 0, dev_root_gen = 0;
  u64 csum_root = 0, csum_root_gen = 0;
  u64 total_bytes = 0;  // superblock total_bytes at that commit
  u64 bytes_used = 0;   // superblock bytes_used at that commit
  u64 num_devices = 0;
  u8 tree_root_level = 0, chunk_root_level = 0, extent_root_level = 0, fs_root_level = 0, dev_root_level = 0,
     csum_root_level = 0;
  bool operator==(const BackupRootRecord&) const = default;
};

/// Slot `slot` of sb.super_roots. REQUIRES: 0 <= slot < NUM_BACKUP_ROOTS.
[[nodiscard]] BackupRootRecord load_backup_root(const SuperBlock& sb, int slot);

/// Overwrites slot `slot` of sb.super_roots with `r`, its unused fields and
/// padding zero (as the kernel's backup_super_roots memsets the slot first).
/// REQUIRES: 0 <= slot < NUM_BACKUP_ROOTS.
void store_backup_root(SuperBlock& sb, int slot, const BackupRootRecord& r);

/// The slot the next commit writes: the one after the newest slot (the
/// highest tree_root_gen, the first of equal ones), wrapping after
/// NUM_BACKUP_ROOTS - 1; slot 0 when the newest has tree_root_gen 0 (no
/// backup written yet). The kernel's backup_super_roots also rotates to the
/// slot after its newest one. Returns 0..NUM_BACKUP_ROOTS - 1.
[[nodiscard]] int next_backup_root_slot(const SuperBlock& sb);

}  // namespace fsctl::format
