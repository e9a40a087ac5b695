// SPDX-License-Identifier: GPL-2.0-only
// ChunkChanges: the chunks a transaction creates and removes, with their dev
// extents and the devices' bytes_used (kernel volumes.c btrfs_create_chunk /
// btrfs_chunk_alloc_add_chunk_item / btrfs_remove_chunk, block-group.c
// btrfs_create_pending_block_groups / btrfs_remove_block_group,
// free-space-tree.c add_block_group_free_space /
// remove_block_group_free_space). One part of the Transaction
// (transaction.h). A new chunk changes memory at once (the allocator,
// FsInfo's chunk map and block groups) and its items are inserted by the
// commit's fixed point, never from inside a tree modification that happened
// to need space; an aborted transaction puts FsInfo's volume state back.
// DESIGN.md "Writing", invariants 1, 3, 4.
#pragma once
#include <map>
#include <optional>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/chunk_item.h"
#include "lib/format/dev_item.h"
#include "lib/format/super.h"
#include "lib/fs/fs_info.h"
#include "lib/volumes/chunk_alloc.h"

namespace fsctl::transaction {

class Transaction;

class ChunkChanges {
 public:
  /// Reads the committed DEV_EXTENTs (where existing chunks' stripes are)
  /// through `t`. Errors: Errc::corrupt (no dev tree, a short item).
  [[nodiscard]] Status load_dev_extents(Transaction& t);

  /// Whether the allocator may create chunks by itself (default: yes).
  void set_allocation(bool allowed) { alloc_allowed_ = allowed; }
  [[nodiscard]] bool allocation_allowed() const { return alloc_allowed_; }
  /// Type and profile of the chunks created from now on (balance convert=).
  void set_profile(u64 type_and_profile) {
    (type_and_profile & format::BLOCK_GROUP_SYSTEM ? system_profile_ : metadata_profile_) = type_and_profile;
  }
  /// The flags (type | profile) of a new chunk of the kind: set_profile's, or
  /// the profile most groups of that kind use.
  [[nodiscard]] u64 default_flags(const fs::FsInfo& fs, bool system) const;

  /// Transaction::alloc_chunk (transaction.h documents it).
  [[nodiscard]] Result<u64> alloc_chunk(Transaction& t, u64 flags);
  /// Transaction::remove_block_group (transaction.h documents it).
  [[nodiscard]] Status remove_block_group(Transaction& t, u64 start);
  /// Inserts the items of the chunks created since the last call (CHUNK_ITEM,
  /// DEV_ITEM bytes_used, DEV_EXTENTs, BLOCK_GROUP_ITEM, FREE_SPACE_INFO and
  /// one FREE_SPACE_EXTENT); the top of each commit round.
  [[nodiscard]] Status insert_pending(Transaction& t);
  [[nodiscard]] bool pending() const;

  /// `sb` with sys_chunk_array updated for the SYSTEM chunks created and
  /// removed (kernel btrfs_add_system_chunk / btrfs_del_sys_chunk).
  /// Errors: Errc::nospc past the array's size; Errc::corrupt.
  [[nodiscard]] Result<format::SuperBlock> updated_sys_chunk_array(const format::SuperBlock& sb) const;
  /// incompat bits the new chunks need (RAID1C34 for RAID1C3/RAID1C4; kernel
  /// check_raid1c34_incompat_flag).
  [[nodiscard]] u64 incompat_needed() const;

  /// Lengths of the chunks of the kind the allocator would create one after
  /// another until they hold `bytes`; none when allocation is off.
  [[nodiscard]] std::vector<u64> planned_lengths(const fs::FsInfo& fs, bool system, u64 bytes) const;
  /// Transaction::allocatable_metadata_bytes (transaction.h documents it).
  [[nodiscard]] u64 allocatable_metadata_bytes(const fs::FsInfo& fs) const;

  /// The chunks this transaction created, in order (CHUNK_ITEMs as written).
  [[nodiscard]] std::vector<format::Chunk> created() const {
    std::vector<format::Chunk> out;
    for (const auto& n : new_chunks_) out.push_back(n.chunk);
    return out;
  }

  /// After the commit: each device's superblock gets its rewritten DEV_ITEM.
  void publish_dev_items(fs::FsInfo& fs) const;
  /// Whether FsInfo's volume state was changed (a commit then reloads it).
  [[nodiscard]] bool changed_volumes() const { return saved_volumes_.has_value(); }
  /// An aborted transaction: FsInfo's chunk map, block groups and DEV_ITEMs
  /// as this transaction found them.
  void restore(fs::FsInfo& fs);

 private:
  struct NewChunk {
    format::Chunk chunk;
    u64 stripe_size = 0;
    bool inserted = false;  // its items are in the trees
  };
  std::vector<volumes::DeviceSpace> device_spaces(const fs::FsInfo& fs) const;
  [[nodiscard]] Status check_no_conversion(const fs::FsInfo& fs, const char* what) const;
  void save_volume_state(const fs::FsInfo& fs);
  [[nodiscard]] Status insert_chunk_items(Transaction& t, const format::Chunk& chunk, u64 stripe_size);
  [[nodiscard]] Status add_dev_bytes_used(Transaction& t, u64 devid, s64 delta);

  std::vector<NewChunk> new_chunks_;                  // created by this transaction, in order
  std::vector<format::Chunk> removed_chunks_;         // removed by this transaction
  std::map<u64, std::map<u64, u64>> dev_extents_;     // committed DEV_EXTENTs: devid -> physical -> length
  std::map<u64, format::DevItemRecord> dev_items_changed_;  // DEV_ITEMs as this transaction rewrote them
  std::optional<fs::FsInfo::VolumeState> saved_volumes_;  // FsInfo's state before the first chunk change
  bool alloc_allowed_ = true;
  std::optional<u64> metadata_profile_, system_profile_;  // set_profile
};

}  // namespace fsctl::transaction
