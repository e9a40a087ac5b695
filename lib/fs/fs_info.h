// SPDX-License-Identifier: GPL-2.0-only
// FsInfo: one opened filesystem — devices, the chosen superblock, the chunk
// map, the tree block cache, root items and block groups (kernel struct
// btrfs_fs_info). Implements ctree::BlockSource.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lib/base/reporter.h"
#include "lib/cache/block_cache.h"
#include "lib/ctree/block_group_lookup.h"
#include "lib/ctree/block_source.h"
#include "lib/ctree/tree_checker.h"
#include "lib/format/root_item.h"
#include "lib/format/feature_flags.h"
#include "lib/format/super.h"
#include "lib/fs/commit_observer.h"
#include "lib/io/block_device.h"
#include "lib/io/buffer_pool.h"
#include "lib/io/overlay_device.h"
#include "lib/volumes/chunk_map.h"
#include "lib/volumes/device_set.h"

namespace fsctl::fs {

/// Options of the open sequence (named bools, not a bit soup). The seams of
/// tests and profiling are options too (LevelDB Env, e2fsprogs io_manager):
/// the library never reads the environment; cmd/ does and fills these.
struct OpenOptions {
  bool write = false;                       // open devices read-write (refuses mounted ones)
  u64 cache_bytes = 256ULL * 1024 * 1024;   // tree block cache budget
  bool load_block_groups = true;            // read block group items at open
  Reporter* reporter = nullptr;             // warnings/notices; null = discard
  /// Wraps each device before the open sequence reads it (FsInfo::open and
  /// open_devices alike), e.g. io::fault_wrapper for crash tests; wrappers
  /// compose (io::compose_wrappers). Empty: the devices as opened.
  io::DeviceWrapper wrap_device;
  /// Told about every committed transaction and, when it asks, phase
  /// timings (commit_observer.h). Null: nobody. REQUIRES: outlives the FsInfo.
  CommitObserver* observer = nullptr;
  /// The operation, for the observer's records (e.g. "convert", "balance";
  /// cmd/ uses the subcommand's name). Spaces are kept as given.
  std::string label = "unnamed";
};

/// A block group as read from its BLOCK_GROUP_ITEM (kernel btrfs_block_group_item).
struct BlockGroup {
  u64 start = 0;        // logical
  u64 length = 0;       // bytes
  u64 used = 0;         // bytes
  u64 flags = 0;        // BLOCK_GROUP_* type and profile
  u64 chunk_objectid = 0;
  u64 item_tree = 0;    // tree holding the item: EXTENT_TREE_OBJECTID or BLOCK_GROUP_TREE_OBJECTID
};

/// A ROOT_ITEM of the root tree with its key.
struct RootEntry {
  format::Key key;
  format::RootInfo item;
};

/// State of a block-group-tree conversion, from the superblock and trees.
struct BgTreeState {
  bool has_bg_tree_bit = false;     // compat_ro BLOCK_GROUP_TREE
  bool changing = false;            // super flag CHANGING_BG_TREE
  bool bg_tree_exists = false;      // ROOT_ITEM (11, ROOT_ITEM, 0) present
  u64 in_bg_tree = 0;               // block group items found in tree 11
  u64 in_extent_tree = 0;           // block group items found in tree 2
  /// "extent-tree", "block-group-tree", "converting-to-bg-tree", "converting-from-bg-tree"
  [[nodiscard]] std::string describe() const;
};

class FsInfo;

/// A rehearsal copy (FsInfo::rehearsal_copy) and the memory budget of its
/// overlays.
struct RehearsalCopy {
  std::unique_ptr<FsInfo> fs;
  std::shared_ptr<io::OverlayBudget> budget;
  /// True once the copy's writes outgrew the budget: its results are void.
  [[nodiscard]] bool outgrown() const { return budget->exceeded; }
};

class FsInfo final : public ctree::BlockSource {
 public:
  /// The open sequence: devices and superblock → sys_chunk_array → chunk tree
  /// (device presence checked against DEV_ITEMs) → root tree → block groups.
  /// Errors: as DeviceSet::open; Errc::not_found for a missing device
  /// (naming its devid and uuid); read errors of the chunk or root tree.
  [[nodiscard]] static Result<std::unique_ptr<FsInfo>> open(const std::vector<std::string>& paths, const OpenOptions& opts);
  /// Same over already opened devices (unit tests, fuzzing).
  [[nodiscard]] static Result<std::unique_ptr<FsInfo>> open_devices(std::vector<std::unique_ptr<io::BlockDevice>> devs,
                                                                    const OpenOptions& opts);

  /// A copy of this filesystem for a rehearsal (rehearsal_copy.cpp): the same
  /// state (superblock, chunk map, roots, block groups) over in-memory
  /// overlays of this FsInfo's devices (io::make_overlay_device), writable,
  /// so a write job can run and commit on it for real while the devices
  /// stay untouched. It reads clean blocks from this FsInfo's cache when it
  /// has not written them itself, and keeps its own in a cache of
  /// min(this cache's budget, 16 MiB). Its overlays together hold at most `overlay_bytes` of written blocks:
  /// past that, RehearsalCopy::outgrown() is true and the copy's further
  /// results mean nothing. REQUIRES: this FsInfo outlives the copy and
  /// commits nothing while the copy is in use.
  /// Errors: those of reading the devices' superblocks through the overlays.
  [[nodiscard]] Result<RehearsalCopy> rehearsal_copy(u64 overlay_bytes);

  // BlockSource.
  [[nodiscard]] Result<cache::TreeBlockRef> read_tree_block(u64 bytenr, const ctree::ParentCheck& check) override;
  [[nodiscard]] Status read_tree_blocks(std::vector<ctree::BlockRequest> requests,
                                        const std::function<Status(const cache::TreeBlockRef&)>& visit,
                                        bool keep_in_cache = false) override;
  [[nodiscard]] u32 nodesize() const override { return super_.nodesize.get(); }

  [[nodiscard]] const format::SuperBlock& super() const { return super_; }
  [[nodiscard]] u32 sectorsize() const { return super_.sectorsize.get(); }
  [[nodiscard]] u16 csum_type() const { return super_.csum_type.get(); }
  [[nodiscard]] const volumes::DeviceSet& devices() const { return devices_; }
  [[nodiscard]] const volumes::ChunkMap& chunk_map() const { return chunk_map_; }
  [[nodiscard]] cache::BlockCache& cache() { return cache_; }
  /// Bytes of I/O buffers (read-ahead runs, write requests) the reads and
  /// commits size themselves to, and the most the buffer pool keeps.
  [[nodiscard]] u64 io_budget() const { return io_budget_; }
  [[nodiscard]] Reporter& reporter() { return *reporter_; }

  /// Root of the root tree / chunk tree, from the superblock.
  [[nodiscard]] ctree::RootRef tree_root() const;
  [[nodiscard]] ctree::RootRef chunk_root() const;
  /// Root of tree `root_id`: the root tree and chunk tree from the
  /// superblock, others from their ROOT_ITEM (highest key offset). nullopt
  /// when the tree does not exist.
  [[nodiscard]] std::optional<ctree::RootRef> find_root(u64 root_id) const;
  /// Where the committed filesystem keeps its BLOCK_GROUP_ITEMs, for
  /// ctree::find_block_group_item (the one rule: block group tree when it
  /// exists, else the extent tree, both during a conversion).
  [[nodiscard]] ctree::BlockGroupTrees block_group_trees() const;
  /// Every ROOT_ITEM of the root tree, in key order.
  [[nodiscard]] const std::vector<RootEntry>& root_entries() const { return roots_; }
  /// DEV_ITEMs of the chunk tree, by devid.
  [[nodiscard]] const std::map<u64, format::DevItem>& dev_items() const { return dev_items_; }
  /// Block groups by start (empty unless OpenOptions::load_block_groups).
  [[nodiscard]] const std::vector<BlockGroup>& block_groups() const { return block_groups_; }
  /// The block group containing `logical`, or nullptr (binary search; block
  /// groups are kept sorted by start).
  [[nodiscard]] const BlockGroup* block_group_of(u64 logical) const;
  [[nodiscard]] const BgTreeState& bg_tree_state() const { return bg_state_; }
  /// incompat bits whose format fsctl does not read (unknown ones, ZONED,
  /// EXTENT_TREE_V2, ...: lib/format/feature_flags.h); 0 when none.
  [[nodiscard]] u64 unknown_incompat() const {
    return format::unreadable_bits(super_.incompat_flags.get(), format::incompat_bits());
  }
  /// Identity every tree block carries (fsid, chunk tree uuid, nodesize, csum type).
  [[nodiscard]] const ctree::BlockIdentity& identity() const { return identity_; }
  /// True when the devices were opened for writing.
  [[nodiscard]] bool writable() const { return writable_; }
  /// True for a rehearsal copy (rehearsal_copy): its commits reach memory only.
  [[nodiscard]] bool is_rehearsal_copy() const { return parent_ != nullptr; }
  /// The cache budget (bytes) that sizes a job's batches and a transaction's
  /// bounded writeback: this FsInfo's, or for a rehearsal copy (whose own
  /// cache is small) the real FsInfo's, so that a run on the copy takes
  /// exactly the real run's steps.
  [[nodiscard]] u64 planning_cache_budget() const {
    return parent_ ? parent_->planning_cache_budget() : cache_.budget();
  }

  /// The observer of OpenOptions (an ignoring one when none was given).
  [[nodiscard]] CommitObserver& observer() { return *observer_; }
  /// Tells the observer about a committed transaction, with `record.label`
  /// set to OpenOptions::label. Called by Transaction::commit last, after the
  /// superblocks are on every device.
  void notify_commit(CommitRecord record);
  /// The sink PhaseTimers of this filesystem measure for: the observer when
  /// it wants phase timings, else null (the timers then do nothing).
  [[nodiscard]] PhaseSink* phase_sink() { return observer_->wants_phase_timings() ? observer_ : nullptr; }

  // Write side (used by lib/transaction at commit; DESIGN.md invariant 2).
  /// Fills each block's checksum and writes it to every mirror, in physical
  /// order, coalescing adjacent blocks into one request of at most 1 MiB.
  /// The written blocks enter the cache. Errors: Errc::io, Errc::not_found
  /// (unmapped bytenr or missing device).
  /// Waits for a writeback started by start_write_tree_blocks first.
  [[nodiscard]] Status write_tree_blocks(std::vector<std::shared_ptr<cache::TreeBlock>> blocks);
  /// write_tree_blocks with the device writes on a helper thread (bounded
  /// writeback before a commit, DESIGN.md invariant 5): checksums, the
  /// blocks' dirty flags and the cache are done before it returns, so the
  /// caller goes on working while the writes run. One at a time: this call,
  /// write_tree_blocks, write_supers and wait_writeback wait for the one
  /// running; so does a read that misses the cache for one of its bytenrs.
  /// The blocks must not change until it is done: join_writeback_of(bytenr)
  /// before changing one. Errors: the waited writeback's (Errc::io), then
  /// as write_tree_blocks.
  [[nodiscard]] Status start_write_tree_blocks(std::vector<std::shared_ptr<cache::TreeBlock>> blocks);
  /// Waits for the writeback start_write_tree_blocks started, if any.
  /// Errors: its first write error (Errc::io), returned once.
  [[nodiscard]] Status wait_writeback();
  /// Waits for the running writeback when it writes `bytenr`; its error is
  /// returned by the next wait_writeback (or write) call.
  void join_writeback_of(u64 bytenr);
  /// fdatasync of every device. Errors: Errc::io.
  [[nodiscard]] Status flush_devices();
  /// Writes `sb` to every device: the device's own dev_item, bytenr and
  /// checksum per copy; primary copies first, flush, then the mirror copies
  /// that fit, flush. Then `sb` becomes this FsInfo's superblock.
  [[nodiscard]] Status write_supers(const format::SuperBlock& sb);
  /// Re-reads the ROOT_ITEMs after a commit changed the root tree.
  [[nodiscard]] Status reload_roots();

  // Write side: the volume state a transaction changes (lib/transaction
  // chunk.cpp). A transaction applies a new or removed chunk here at once, so
  // that new tree blocks can be mapped and written to a new chunk before the
  // commit, and puts the saved state back when it aborts; after a commit
  // reload_chunks() re-reads everything from disk.
  /// Chunk map, block groups and DEV_ITEMs, saved whole.
  struct VolumeState {
    volumes::ChunkMap chunk_map;
    std::vector<BlockGroup> block_groups;
    std::map<u64, format::DevItem> dev_items;
  };
  [[nodiscard]] VolumeState volume_state() const { return {chunk_map_, block_groups_, dev_items_}; }
  /// Puts back a state saved by volume_state() (an aborted transaction).
  void restore_volume_state(VolumeState state);
  /// Adds a chunk created by a transaction and its block group (block groups
  /// stay sorted by start). Errors: Errc::corrupt when the chunk overlaps
  /// another (ChunkMap::add), Errc::invalid_argument when `bg` does not
  /// start at the chunk's logical.
  [[nodiscard]] Status add_chunk(const format::Chunk& chunk, const BlockGroup& bg);
  /// Removes the chunk and the block group starting at `logical` (no-op for
  /// what does not exist).
  void remove_chunk(u64 logical);
  /// Sets `used` (bytes) of the block group starting at `start`, as a commit
  /// wrote it into its BLOCK_GROUP_ITEM.
  void set_block_group_used(u64 start, u64 used);
  /// Replaces the DEV_ITEM of `item.devid`; write_supers puts it into that
  /// device's superblock dev_item (kernel write_all_supers fills each
  /// device's copy from its own btrfs_device).
  void set_dev_item(const format::DevItem& item);
  /// Re-reads the chunk map (sys_chunk_array, then the chunk tree), the
  /// DEV_ITEMs and, when they were loaded at open, the block groups, after a
  /// commit that changed chunks. On error the previous state is kept.
  /// Errors: read errors of the chunk tree or the block group items.
  [[nodiscard]] Status reload_chunks();

  /// Counters of the block layer, for benchmarks: blocks verified, bytes read.
  [[nodiscard]] u64 blocks_read() const { return blocks_read_; }
  /// Damaged copies of tree blocks met so far whose block was read from
  /// another mirror (each also reported as a warning).
  [[nodiscard]] u64 bad_copies_read() const { return bad_copies_read_; }
  [[nodiscard]] u64 bytes_read() const { return bytes_read_; }

 private:
  FsInfo() : cache_(0) {}
  /// Splits the memory budget `cache_bytes` (--cache-size) between the I/O
  /// buffers (io_budget: an eighth, 2 to 24 MiB, at most a quarter) and the
  /// block cache (the rest), so that read-ahead and writeback buffers are
  /// inside it too (DESIGN.md invariant 5: peak memory within --cache-size
  /// + 64 MiB).
  void set_cache_budget(u64 cache_bytes);
  Status load_sys_chunk_array();
  Status load_chunk_tree();
  Status load_root_tree();
  Status load_block_groups();
  Result<cache::TreeBlockRef> read_mirrors(u64 bytenr, const ctree::ParentCheck& check, int skip_mirror,
                                           const std::string& skip_problem);
  std::string device_name(u64 devid) const;
  /// The filesystem as named in messages: its first device's path, so errors
  /// that involve no single copy (unmapped bytenr, bad parent pointer to a
  /// cached block) still name the device.
  std::string fs_name() const;
  /// The cached block at `bytenr`: this FsInfo's cache, else (a rehearsal
  /// copy) its parent's, unless the copy wrote that bytenr itself.
  cache::TreeBlockRef cached(u64 bytenr);

  volumes::DeviceSet devices_;
  format::SuperBlock super_{};
  volumes::ChunkMap chunk_map_;
  cache::BlockCache cache_;
  io::BufferPool io_buffers_{0};  // read-ahead and writeback buffers, reused (set_cache_budget)
  u64 io_budget_ = 0;
  ctree::BlockIdentity identity_;
  Reporter* reporter_ = nullptr;
  CommitObserver* observer_ = nullptr;
  std::string label_;
  std::vector<RootEntry> roots_;
  std::map<u64, format::DevItem> dev_items_;
  std::vector<BlockGroup> block_groups_;
  BgTreeState bg_state_;
  u64 blocks_read_ = 0, bytes_read_ = 0, bad_copies_read_ = 0;
  bool writable_ = false;
  bool block_groups_loaded_ = false;
  FsInfo* parent_ = nullptr;                  // rehearsal copies: the FsInfo copied
  std::set<u64> written_bytenrs_;             // rehearsal copies: tree blocks written here
  struct Writeback;                           // write_back.cpp
  /// Prepares `w`'s writes: checksums into its blocks, one piece per
  /// block and mirror, coalesced requests. Errors: as write_tree_blocks.
  Status plan_writeback(Writeback& w);
  /// The blocks of `w`, written (or being written): clean, in the cache.
  void enter_written(Writeback& w);
  void join_writeback(u64 bytenr);
  std::optional<Error> writeback_error_;  // of a writeback joined by join_writeback_of, not returned yet
  // Last: destroyed first, so its thread ends before the devices close.
  std::shared_ptr<Writeback> writeback_;  // running, started by start_write_tree_blocks
};

}  // namespace fsctl::fs
