// SPDX-License-Identifier: GPL-2.0-only
// The qgroup model: what the quota tree (objectid 8) says, and what the trees
// say. Items mirror kernel btrfs_qgroup_status_item / _info_item /
// _limit_item and the QGROUP_RELATION key pairs (btrfs_tree.h).
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lib/base/progress.h"
#include "lib/format/qgroup_items.h"
#include "lib/fs/fs_info.h"

namespace fsctl::qgroup {

/// qgroupid = level << 48 | id (BTRFS_QGROUP_LEVEL_SHIFT). Printed "level/id".
[[nodiscard]] inline u64 qgroup_level(u64 qgroupid) { return format::qgroupid_level(qgroupid); }
[[nodiscard]] inline u64 qgroup_subvolid(u64 qgroupid) { return format::qgroupid_id(qgroupid); }
[[nodiscard]] std::string qgroupid_to_string(u64 qgroupid);
/// Parses "level/id" or a plain subvolume id. nullopt when malformed.
[[nodiscard]] std::optional<u64> parse_qgroupid(const std::string& s);

/// Numbers of one qgroup, in bytes (kernel btrfs_qgroup_info_item).
struct QgroupCount {
  u64 rfer = 0, rfer_cmpr = 0, excl = 0, excl_cmpr = 0;
  bool operator==(const QgroupCount&) const = default;
};

/// QGROUP_LIMIT item (kernel btrfs_qgroup_limit_item); flags say which max is set.
struct QgroupLimit {
  u64 flags = 0, max_rfer = 0, max_excl = 0, rsv_rfer = 0, rsv_excl = 0;
};
using format::QGROUP_LIMIT_MAX_EXCL;
using format::QGROUP_LIMIT_MAX_RFER;

/// One qgroup as stored in the quota tree.
struct QgroupItem {
  u64 qgroupid = 0;
  bool has_info = false;
  u64 info_generation = 0;
  QgroupCount ondisk;
  std::optional<QgroupLimit> limit;
  std::set<u64> parents;   // qgroupids this one is a member of
  std::set<u64> children;  // direct members
};

/// Everything the quota tree holds.
struct QuotaState {
  bool status_present = false;
  u64 version = 0, generation = 0, flags = 0, rescan = 0, enable_gen = 0;  // QGROUP_STATUS (format::QgroupStatusRecord)
  std::map<u64, QgroupItem> qgroups;  // by qgroupid
  u64 quota_tree_leaves = 0;          // how many leaves were read
  /// The superblock's SIMPLE_QUOTA incompat bit: the kernel accounts in
  /// simple mode (qgroup.c btrfs_qgroup_mode), whatever the status flags say.
  bool simple_quota = false;
  [[nodiscard]] bool on() const { return flags & format::QGROUP_STATUS_FLAG_ON; }
  [[nodiscard]] bool rescan_running() const { return flags & format::QGROUP_STATUS_FLAG_RESCAN; }
  [[nodiscard]] bool inconsistent() const { return flags & format::QGROUP_STATUS_FLAG_INCONSISTENT; }
  [[nodiscard]] bool simple_mode() const { return flags & format::QGROUP_STATUS_FLAG_SIMPLE_MODE; }
  /// The first transid whose extents simple quotas count: the status item's
  /// enable_gen, which the kernel reads only when the item has SIMPLE_MODE
  /// (btrfs_read_qgroup_config; 0 otherwise, every extent counts).
  [[nodiscard]] u64 squota_enable_gen() const { return simple_mode() ? enable_gen : 0; }
  /// "simple" or "full": the accounting the kernel does on this filesystem.
  [[nodiscard]] const char* mode_name() const { return simple_quota ? "simple" : "full"; }
};

/// Reads the whole quota tree from its first key (0,0,0): status, every
/// INFO/LIMIT item and both halves of each relation. std::nullopt when the
/// filesystem has no quota tree (quota disabled). Errors: read errors of the
/// quota tree naming the bytenr; Errc::corrupt for short items or a relation
/// whose halves disagree.
[[nodiscard]] Result<std::optional<QuotaState>> read_quota(fs::FsInfo& fs);

/// A subvolume tree the computation walks (an fs tree: 5 or >= 256).
struct SubvolRoot {
  u64 root_id = 0;
  bool dropping = false;   // refs == 0: deleted, cleanup not finished
  format::Key drop_progress{};
  u8 drop_level = 0;
};

/// The subvolume trees of `fs` (is_fstree ROOT_ITEMs), those being deleted
/// with their drop progress.
[[nodiscard]] std::vector<SubvolRoot> subvolume_roots(const fs::FsInfo& fs);

/// Level-0 members (subvolume ids) of qgroup `q` through every level of
/// relations; {id} for a level-0 qgroup.
[[nodiscard]] std::set<u64> level0_members(const QuotaState& quota, u64 q);

/// Memory of compute_qgroups beyond the blocks it holds, for a tree block
/// cache of `cache_budget` bytes: the data references' buffer (half of the
/// cache, at least 4 MiB: the walk streams its blocks past the cache, and
/// with a quarter the 1.8 million references of bg-8T-16k spilled to disk
/// once the I/O buffers took their share of --cache-size) and the memo of
/// root-set unions (1/32, at least 1 MiB).
struct WalkBudget {
  u64 data_refs = 0;
  u64 union_memo = 0;
};
[[nodiscard]] WalkBudget walk_budget(u64 cache_budget);

/// Computed numbers.
struct Computed {
  std::map<u64, QgroupCount> counts;  // by qgroupid, for every qgroup in the quota tree and every subvolume
  std::vector<SubvolRoot> subvols;    // the trees that were walked
  u64 tree_blocks = 0;                // fs-tree blocks accounted (each once)
  u64 data_extents = 0;               // distinct data extents accounted
  u64 rootsets = 0;                   // distinct sets of referencing subvolumes
  u64 spilled_runs = 0;               // sorted runs of data references written to a temporary file
  u64 rootset_bytes = 0;              // memory of the interned root sets at the end (RootSets::memory_bytes)
  double seconds = 0;
  /// Simple quotas (QuotaState::simple_quota): the numbers charge each
  /// extent to its owner; tree_blocks and data_extents count the extents
  /// charged, these the extents left out.
  bool simple = false;
  u64 enable_gen = 0;              // extents of an older generation are not counted
  u64 extents_before_enable = 0;   // fs-owned extents born before enable_gen
  u64 data_extents_unowned = 0;    // data extents from enable_gen on without an owner ref
};

/// Computes referenced/exclusive for every qgroup of `quota` (and a level-0
/// count for every subvolume, with or without a qgroup) by walking all
/// subvolume trees top-down once (ctree::walk_trees): a tree block's set of
/// subvolumes is the union of its parents' sets, a data extent's set is the
/// union over the leaves that point at it. Referenced(q) = bytes of extents
/// whose set meets q's level-0 members; exclusive(q) = bytes of extents whose
/// non-empty set lies inside them. Data extents count disk_num_bytes, tree
/// blocks nodesize; compressed twins equal the plain numbers (as the kernel
/// keeps them). With simple quotas (quota.simple_quota) it calls
/// compute_squota instead. Errors: read errors naming the bytenr. `data_ref_budget` bounds the memory of the data extent
/// references; past it they are spilled to a temporary file (lib/qgroup/data_refs.h).
/// 0 (the default) takes it from the tree block cache's budget
/// (walk_budget): the walk reads blocks without caching them, so the cache
/// gives up that much for the time of the computation (its outside bytes),
/// and the whole stays within --cache-size + 64 MiB (DESIGN.md invariant 5).
/// `progress`, when given, is told the tree blocks walked so far and their
/// bytes as the walk goes (ProgressCounts tree_blocks_done, bytes_done; no
/// totals: the walk does not know them beforehand).
[[nodiscard]] Result<Computed> compute_qgroups(fs::FsInfo& fs, const QuotaState& quota,
                                               u64 data_ref_budget = 0,
                                               ProgressObserver* progress = nullptr);

/// Simple-quota numbers (kernel qgroup.c btrfs_record_squota_delta and its
/// callers in extent-tree.c): every extent item of the extent tree whose
/// generation is at least quota.squota_enable_gen() is charged, once, to one
/// subvolume: a data extent (disk num_bytes) to the root of its
/// EXTENT_OWNER_REF, a tree block (nodesize) to the owner in its header.
/// Extents owned by no subvolume (global trees, relocation trees, data
/// extents without an owner ref) count nowhere. A level-0 qgroup gets what
/// its subvolume owns, referenced = exclusive (no sharing accounting); a
/// higher level the sum over its level-0 members. The compressed twins are
/// 0, as the kernel leaves them under simple quotas. Reads the extent tree in
/// one streaming pass, then the headers of the counted tree blocks in
/// physical order. Errors: read errors naming the bytenr, Errc::corrupt for
/// an extent item the codec rejects (naming its key).
[[nodiscard]] Result<Computed> compute_squota(fs::FsInfo& fs, const QuotaState& quota,
                                              ProgressObserver* progress = nullptr);

}  // namespace fsctl::qgroup
