// SPDX-License-Identifier: GPL-2.0-only
// Transaction: one copy-on-write change of the filesystem, committed
// atomically by writing new blocks, flushing, then the superblocks (kernel
// transaction.c; DESIGN.md invariants 1-4). Destroyed without commit() it
// writes nothing (abort). A handle over parts, each in its own file (kernel
// btrfs_trans_handle with delayed refs apart): the SpaceAllocator (where new
// blocks go), DelayedRefs (extent items of blocks allocated and freed),
// FreeSpaceUpdates (the free space tree), BlockGroupUsage (block group
// `used`), ChunkChanges (chunks created and removed) and RootUpdates (trees
// and their ROOT_ITEMs). The handle owns the new blocks, implements the
// TreeWriter the B-tree code writes through, and runs the commit (commit.cpp).
//
// Scope of this engine (documented in docs/DESIGN.md "Writing"): trees that
// are not shared (global trees: root, extent, chunk, quota, free space, block
// group, uuid, csum, dev), new metadata and system chunks and the removal of
// empty block groups, filesystems with a free space tree, with or without
// skinny metadata (tree block extent items in either form: DelayedRefs). A
// shared (snapshotted) block or the v1 space cache is refused with
// Errc::unsupported before anything is written.
#pragma once
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lib/base/stop_request.h"
#include "lib/ctree/tree_writer.h"
#include "lib/ctree/write.h"
#include "lib/fs/fs_info.h"
#include "lib/transaction/block_group_usage.h"
#include "lib/transaction/chunk_changes.h"
#include "lib/transaction/delayed_refs.h"
#include "lib/transaction/free_space_updates.h"
#include "lib/transaction/root_updates.h"
#include "lib/transaction/space_allocator.h"
#include "lib/transaction/super_changes.h"

namespace fsctl::transaction {

/// A block group's length (bytes) and committed FREE_SPACE_INFO, for the
/// reservation's bound of free space extent<->bitmap conversions.
struct ConversionGroup {
  u64 length = 0;
  u32 extent_count = 0;
  bool using_bitmaps = false;
};

/// Counters for reports (JSON "reserved_bytes"/"used_bytes" and friends).
struct TransactionStats {
  u64 blocks_allocated = 0;
  u64 blocks_freed = 0;
  u64 blocks_written = 0;  // block writes (a block written back early and again at commit counts twice)
  u64 blocks_written_early = 0;  // of blocks_written: by bounded writeback before the commit
  u64 writebacks_early = 0;      // bounded writeback rounds
  u64 used_bytes = 0;  // metadata bytes newly allocated by this transaction
};

/// What an operation is about to change, for the reservation made before the
/// first write (DESIGN.md invariant 4).
struct Reservation {
  u64 items_inserted = 0;  // per touched tree: paths copied and maybe split
  u64 items_updated = 0;
  u64 items_deleted = 0;
  u64 trees_touched = 1;
  u64 extra_blocks = 0;  // blocks of new trees built by the operation (padded by a quarter)
  u64 exact_blocks = 0;  // blocks the operation allocates itself, counted exactly (relocation's copies)
  /// The trees the items are in, when the caller knows them: the bound is
  /// then computed from their real shapes (blocks per level, full nodes)
  /// instead of the tallest tree's height per item. A tree that does not
  /// exist yet (create_tree) counts as one empty leaf.
  std::vector<u64> trees;
  /// Of items_inserted: insertions or growths by more than half a leaf's data
  /// area, which may split a leaf twice.
  u64 items_large = 0;
  /// The bytes the insertions add (item headers included; a growth counts
  /// the grown item whole), when the caller knows them; 0: unknown. Known,
  /// the new leaves are bounded by them (about one split per quarter leaf of
  /// inserted bytes, plus one per leaf touched and per level) instead of one
  /// per insertion.
  u64 insert_bytes = 0;
  /// Trees the operation deletes whole (Transaction::delete_tree): every
  /// block they hold is freed at commit (an extent item dropped, free space
  /// returned) and their ROOT_ITEM deleted. Counted from their shapes on
  /// the path with `trees` named.
  std::vector<u64> trees_deleted;
};

class Transaction final : public ctree::TreeWriter {
 public:
  /// Starts transaction super.generation + 1. On a read-only FsInfo it can
  /// plan and reserve (dry runs) but commit() fails before writing.
  /// Errors: Errc::unsupported (see
  /// the scope above, unknown incompat bits, a log tree to replay, a
  /// conversion in progress not allowed by `allow_changing_bg_tree`).
  [[nodiscard]] static Result<std::unique_ptr<Transaction>> start(fs::FsInfo& fs, bool allow_changing_bg_tree = false);
  /// Without commit(): aborts. Nothing more is written, and FsInfo's chunk
  /// map, block groups and DEV_ITEMs get back the state this transaction
  /// found (chunks it created or removed exist only in memory until commit).
  ~Transaction() override;

  /// Reserves the metadata bytes `r` may need and fails with Errc::nospc
  /// when the metadata block groups and the metadata chunks still
  /// allocatable from unallocated device space (allocatable_metadata_bytes)
  /// cannot provide them. Nothing is written either way. Returns the
  /// reserved bytes.
  [[nodiscard]] Result<u64> reserve(const Reservation& r);
  /// Bytes system block groups can take in this transaction, counted up to
  /// `want`: free space of the system groups not excluded, then the SYSTEM
  /// chunks still allocatable from unallocated device space (reserve()
  /// counts metadata space only; relocating a system group's chunk tree
  /// blocks needs system space). Errors: reading the free space of the
  /// block groups (load_space).
  [[nodiscard]] Result<u64> system_bytes_available(u64 want);

  /// Reserves for changes a rehearsal measured: `measured` bytes are what
  /// the same changes allocated on a rehearsal copy of this exact state
  /// (batch_runner.h), so they fit; an eighth and a block more are added as
  /// a guard where the space allows. The engine is deterministic (the
  /// allocator, the search orders and the commit's fixed point depend only
  /// on the filesystem's state and the changes), and the test suite's
  /// reservation report checks used <= reserved in every transaction.
  /// Returns the reserved bytes.
  [[nodiscard]] Result<u64> reserve_measured(u64 measured);

  /// The tree `root_id` as it is in this transaction (created on first use
  /// from its ROOT_ITEM, or the superblock for the root tree and the chunk
  /// tree; chunk tree blocks are allocated from SYSTEM block groups and its
  /// new root goes into the superblock at commit).
  /// Errors: Errc::not_found when the tree does not exist.
  [[nodiscard]] Result<ctree::WriteRoot*> root(u64 root_id);

  /// Creates an empty tree `root_id` (one empty leaf) with its ROOT_ITEM
  /// (root_id, ROOT_ITEM, 0) in the root tree: refs 1, level 0, generation
  /// and generation_v2 = transid, bytes_used = nodesize, no uuid (kernel
  /// btrfs_create_tree for a global tree). Errors: Errc::invalid_argument
  /// when the tree exists; allocation errors.
  [[nodiscard]] Result<ctree::WriteRoot*> create_tree(u64 root_id);
  /// Deletes tree `root_id` whole: frees every block (each must be the
  /// tree's alone: one TREE_BLOCK_REF of it) and removes its ROOT_ITEM
  /// (RootUpdates::delete_tree). Reserve with Reservation::trees_deleted.
  /// Errors: Errc::unsupported naming a shared block; read and tree errors.
  [[nodiscard]] Status delete_tree(u64 root_id);

  /// Preflight for operations that must refuse before their first commit:
  /// every block of tree `root_id` (all of it, or only the search paths of
  /// `keys` when given) must be one this engine may copy (its extent item is
  /// exactly one TREE_BLOCK_REF of the tree). Reads only. Errors:
  /// Errc::unsupported naming the block; read errors.
  [[nodiscard]] Status check_copyable(u64 root_id, const std::vector<format::Key>* keys = nullptr);

  /// Applies extent references, free space and block group usage until they
  /// reach a fixed point, updates root items, writes every new block to all
  /// mirrors, flushes, writes the superblocks, flushes. After a failure the
  /// on-disk filesystem is the previous commit. `super` changes superblock
  /// flag words in the same commit.
  [[nodiscard]] Status commit(const SuperChanges& super = {});

  /// Bounded writeback (DESIGN.md invariant 5): when the dirty blocks of
  /// this transaction exceed `bytes` (default: half the block cache budget,
  /// OpenOptions::cache_bytes), the allocator first writes every dirty block no
  /// caller holds (checksummed, to all mirrors, coalesced like the commit's
  /// writeback) and drops it from memory; the block cache may keep it like
  /// any clean block. Such a block is still new in this transaction: a later
  /// change makes it dirty again at the same bytenr (dirty_block(ref)) and
  /// the commit writes it again, so the committed filesystem is the same as
  /// with an unbounded budget. Crash-safe: nothing committed points at these
  /// blocks before the superblock write. 0 turns it off. Read-only FsInfos
  /// (dry runs) never write back.
  void set_writeback_threshold(u64 bytes) { writeback_threshold_ = bytes; }

  /// A request to stop (lib/base/stop_request.h): at level 2 ("now") every
  /// block allocation and the start of the commit fail with Errc::aborted
  /// ("interrupted"), so the step is abandoned before it writes anything of
  /// its own (its blocks written back early lie in unreferenced space). Null:
  /// never. REQUIRES: outlives the transaction.
  void set_stop_request(const StopRequest* stop) { stop_ = stop; }

  [[nodiscard]] const TransactionStats& stats() const { return stats_; }
  [[nodiscard]] u64 reserved_bytes() const { return reserved_; }
  [[nodiscard]] fs::FsInfo& fs() { return fs_; }

  // Block groups and chunks (chunk.cpp).
  /// The allocator never places a block in these block groups (logical
  /// starts) from now on: relocation targets (DESIGN.md "Balance").
  void exclude_block_groups(const std::set<u64>& starts) { alloc_.exclude(starts); }
  /// Whether the allocator may create metadata and system chunks by itself
  /// when the block groups have no room (default: yes). Off, a full
  /// filesystem is Errc::nospc, and reserve() counts no unallocated space.
  void set_chunk_allocation(bool allowed) { chunks_.set_allocation(allowed); }
  /// Type and profile (BLOCK_GROUP_METADATA or _SYSTEM | profile bit) of the
  /// chunks the allocator creates by itself from now on, instead of the
  /// profile most existing groups of that type use (balance convert=).
  void set_chunk_profile(u64 type_and_profile) { chunks_.set_profile(type_and_profile); }
  /// Allocates a new chunk of type and profile `flags` (BLOCK_GROUP_METADATA
  /// or BLOCK_GROUP_SYSTEM, optionally with one profile bit: none = single,
  /// DUP, RAID1, RAID1C3, RAID1C4, RAID0, RAID10) from the devices'
  /// unallocated space, placed and sized by the kernel's regular policy
  /// (volumes::plan_chunk; kernel volumes.c btrfs_create_chunk), at the
  /// logical address after the highest chunk end. The new block group is
  /// usable by this transaction at once: it is in the allocator (minus
  /// superblock copies), in FsInfo's chunk map and block group list. Its
  /// items are inserted at commit (kernel btrfs_create_pending_block_groups
  /// and btrfs_chunk_alloc_add_chunk_item): CHUNK_ITEM (256, CHUNK_ITEM,
  /// logical) in the chunk tree and, for SYSTEM, the superblock's
  /// sys_chunk_array; DEV_EXTENT (devid, DEV_EXTENT, physical) per stripe in
  /// the dev tree; DEV_ITEM bytes_used (chunk tree item and superblock
  /// dev_item); BLOCK_GROUP_ITEM (used 0) in the block group tree when the
  /// filesystem has one, else the extent tree; FREE_SPACE_INFO (extent_count
  /// 1) and one FREE_SPACE_EXTENT over the whole group (kernel
  /// add_block_group_free_space). Returns the new block group's logical
  /// start. Errors, all before any change: Errc::nospc (the devices cannot
  /// hold the profile's stripes, or a SYSTEM chunk no longer fits
  /// sys_chunk_array), Errc::invalid_argument (no METADATA/SYSTEM type bit,
  /// several profile bits), Errc::unsupported (DATA, RAID5/6, a block group
  /// tree conversion in progress).
  [[nodiscard]] Result<u64> alloc_chunk(u64 flags);
  /// Removes the empty block group at logical `start` and its chunk (kernel
  /// btrfs_remove_chunk, btrfs_remove_block_group,
  /// remove_block_group_free_space): BLOCK_GROUP_ITEM, FREE_SPACE_INFO and
  /// every FREE_SPACE_EXTENT/BITMAP of its range, CHUNK_ITEM (and its
  /// sys_chunk_array entry for SYSTEM), its DEV_EXTENTs, DEV_ITEM bytes_used
  /// lowered by their lengths (chunk tree item and superblock dev_item). The
  /// group leaves the allocator for good; its device space is reused only
  /// after the commit. REQUIRES: the committed BLOCK_GROUP_ITEM says used 0,
  /// the extent tree has no extent in its range, and this transaction
  /// allocated nothing from it. Errors: Errc::invalid_argument (no block
  /// group starts at `start`, not empty, touched or created by this
  /// transaction), Errc::unsupported (a conversion in progress), Errc::corrupt
  /// (a DEV_EXTENT missing or naming another chunk); tree errors.
  [[nodiscard]] Status remove_block_group(u64 start);
  /// Bytes of metadata block groups that could still be allocated from the
  /// devices' unallocated space with the filesystem's metadata profile
  /// (chunks planned one after another until none fits, minus superblock
  /// copies and the blocks inserting their items costs); 0 when chunk
  /// allocation is off. For reserve(). REQUIRES: load_space() succeeded.
  [[nodiscard]] u64 allocatable_metadata_bytes() const { return chunks_.allocatable_metadata_bytes(fs_); }

  // Space without extent items, for callers that write the extent items
  // themselves (relocation copies a block's extent item with its backrefs).
  /// A new dirty tree block (header initialized: bytenr, fsid, chunk tree
  /// uuid, generation = transid, `owner`, `level`) whose extent item the
  /// caller inserts. Free space tree, block group used and bytes_used are
  /// kept by the transaction.
  [[nodiscard]] Result<std::shared_ptr<cache::TreeBlock>> alloc_block_space(u64 owner, u8 level);
  /// Frees the space of committed tree block `bytenr` (pinned until commit)
  /// whose extent item the caller deletes. Errors: Errc::corrupt when
  /// outside every metadata block group.
  [[nodiscard]] Status release_block_space(u64 bytenr);
  /// Frees the space of the committed data extent of `len` bytes at logical
  /// `bytenr` whose extent item the caller deletes (its last reference went;
  /// kernel extent-tree.c __btrfs_free_extent -> do_free_extent_accounting):
  /// the free space tree marks it free at commit, its block group's `used`
  /// and the superblock's bytes_used go down by `len`. Its checksums are the
  /// caller's (data_extent_free.h). Errors: Errc::corrupt when the range is
  /// not inside one DATA block group.
  [[nodiscard]] Status release_data_space(u64 bytenr, u64 len);

  // TreeWriter / BlockSource.
  [[nodiscard]] u64 transid() const override { return transid_; }
  [[nodiscard]] Result<std::shared_ptr<cache::TreeBlock>> alloc_tree_block(u64 owner, u8 level) override;
  [[nodiscard]] Status free_tree_block(u64 bytenr, u64 owner, u8 level) override;
  [[nodiscard]] std::shared_ptr<cache::TreeBlock> dirty_block(u64 bytenr) override;
  [[nodiscard]] std::shared_ptr<cache::TreeBlock> dirty_block(const cache::TreeBlockRef& b) override;
  [[nodiscard]] Result<cache::TreeBlockRef> read_tree_block(u64 bytenr, const ctree::ParentCheck& check) override;
  [[nodiscard]] Status read_tree_blocks(std::vector<ctree::BlockRequest> requests,
                                        const std::function<Status(const cache::TreeBlockRef&)>& visit,
                                        bool keep_in_cache = false) override;
  [[nodiscard]] u32 nodesize() const override { return fs_.nodesize(); }

 // The parts, for each other and for the commit.
  [[nodiscard]] SpaceAllocator& allocator() { return alloc_; }
  [[nodiscard]] DelayedRefs& delayed_refs() { return refs_; }
  [[nodiscard]] FreeSpaceUpdates& free_space() { return fst_; }
  [[nodiscard]] BlockGroupUsage& usage() { return usage_; }
  [[nodiscard]] ChunkChanges& chunks() { return chunks_; }
  [[nodiscard]] RootUpdates& roots() { return roots_; }
  /// Loads the allocator's space and the committed dev extents, once.
  [[nodiscard]] Status load_space();
  /// Whether `bytenr` was allocated by this transaction (dirty in memory or
  /// written back early).
  [[nodiscard]] bool is_new(u64 bytenr) const { return dirty_.count(bytenr) || written_early_.count(bytenr); }

 private:
  explicit Transaction(fs::FsInfo& fs);
  /// A free block for a tree (`system`: the chunk tree, from SYSTEM groups;
  /// kernel get_alloc_profile_by_root); allocates a new chunk of the kind
  /// when none is left and chunk allocation is allowed.
  Result<u64> find_free(u64 len, bool system);
  /// The bounded writeback of set_writeback_threshold, when due.
  Status write_back_early();
  /// Blocks to write in ascending bytenr, whatever order the dirty table
  /// gave them: writes, cache insertions and error messages do not depend on
  /// its hashing.
  static void sort_by_bytenr(std::vector<std::shared_ptr<cache::TreeBlock>>& blocks);
  /// Tells the block cache how many bytes the dirty blocks hold, which it
  /// leaves out of its budget (up to half of it).
  void note_dirty_bytes();
  Status check_droppable(u64 bytenr, u64 owner, u8 level);
  Status update_qgroup_status_generation();
  /// One round of the commit's fixed point; whether it changed anything.
  Result<bool> commit_round();
  /// The superblock the commit writes: new roots, generation, bytes_used,
  /// flag words, sys_chunk_array, a rotated backup root slot.
  Result<format::SuperBlock> new_super(const SuperChanges& super) const;
  Result<u64> reserve_blocks_by_shape(const Reservation& r);
  /// The block groups whose free space a commit allocating `blocks` tree
  /// blocks may convert between extents and bitmaps (reservation.cpp).
  std::vector<ConversionGroup> conversion_groups(u64 blocks) const;
  [[nodiscard]] Result<u64> reserve_bytes(u64 want);

  fs::FsInfo& fs_;
  u64 transid_ = 0;
  SpaceAllocator alloc_;
  DelayedRefs refs_;
  FreeSpaceUpdates fst_;
  BlockGroupUsage usage_;
  ChunkChanges chunks_;
  RootUpdates roots_;
  // Hash tables: looked up at every copy-on-write check (tens of thousands
  // of blocks in a relocation); what is written is sorted by bytenr first.
  std::unordered_map<u64, std::shared_ptr<cache::TreeBlock>> dirty_;
  std::unordered_set<u64> written_early_;  // new blocks written back before the commit and not dirty again
  std::optional<u64> writeback_threshold_;  // dirty bytes; unset = half the cache budget
  bool committed_ = false;
  s64 bytes_used_delta_ = 0;
  u64 reserved_ = 0;
  TransactionStats stats_;
  const StopRequest* stop_ = nullptr;
};

}  // namespace fsctl::transaction
