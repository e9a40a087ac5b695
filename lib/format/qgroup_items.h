// SPDX-License-Identifier: GPL-2.0-only
// Quota tree item codecs (kernel btrfs_tree.h; tree 8): QGROUP_STATUS
// (0, 240, 0) struct btrfs_qgroup_status_item in its 32-byte form and the
// 40-byte one with enable_gen (simple quotas), QGROUP_INFO (0, 242, qgroupid)
// btrfs_qgroup_info_item, QGROUP_LIMIT (0, 244, qgroupid)
// btrfs_qgroup_limit_item, and QGROUP_RELATION (a, 246, b), a key without body
// stored once each way. qgroupid = level << 48 | id.
#pragma once
#include <array>
#include <span>
#include <string>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/key.h"

namespace fsctl::format {

// Status flags (BTRFS_QGROUP_STATUS_FLAG_*) and version.
inline constexpr u64 QGROUP_STATUS_FLAG_ON = 1ULL << 0, QGROUP_STATUS_FLAG_RESCAN = 1ULL << 1,
                     QGROUP_STATUS_FLAG_INCONSISTENT = 1ULL << 2, QGROUP_STATUS_FLAG_SIMPLE_MODE = 1ULL << 3;
inline constexpr u64 QGROUP_STATUS_VERSION = 1;
// Limit flags (BTRFS_QGROUP_LIMIT_*): which maximum is set.
inline constexpr u64 QGROUP_LIMIT_MAX_RFER = 1ULL << 0, QGROUP_LIMIT_MAX_EXCL = 1ULL << 1;
inline constexpr int QGROUP_LEVEL_SHIFT = 48;  // BTRFS_QGROUP_LEVEL_SHIFT

/// Level and id of a qgroupid, and its "level/id" text (as btrfs-progs prints it).
[[nodiscard]] constexpr u64 qgroupid_level(u64 qgroupid) { return qgroupid >> QGROUP_LEVEL_SHIFT; }
[[nodiscard]] constexpr u64 qgroupid_id(u64 qgroupid) { return qgroupid & ((1ULL << QGROUP_LEVEL_SHIFT) - 1); }
[[nodiscard]] std::string qgroupid_to_string(u64 qgroupid);

/// A QGROUP_STATUS item in cpu form.
struct QgroupStatusRecord {
  u64 version = QGROUP_STATUS_VERSION;
  u64 generation = 0;  // transid of the last commit that wrote the qgroup numbers
  u64 flags = 0;       // QGROUP_STATUS_FLAG_*
  u64 rescan = 0;      // rescan progress (objectid); (u64)-1 after a completed kernel rescan
  u64 enable_gen = 0;  // simple quotas: transid quota was enabled in (40-byte form only)
  bool has_enable_gen = false;  // the item is the 40-byte form
  bool operator==(const QgroupStatusRecord&) const = default;
};

/// Decodes a QGROUP_STATUS item: 32 bytes, or 40 with enable_gen. Errors:
/// Errc::corrupt "qgroup status item of N bytes, expect at least 32".
[[nodiscard]] Result<QgroupStatusRecord> decode_qgroup_status(std::span<const u8> data);
/// The 40 bytes of `s` when s.has_enable_gen, else 32.
[[nodiscard]] std::vector<u8> encode_qgroup_status(const QgroupStatusRecord& s);
/// Writes `s` into the item `data` in place: version, generation, flags and
/// rescan, and enable_gen when the item is the 40-byte form (s.has_enable_gen
/// is ignored: the item's size decides). Errors: as decode_qgroup_status,
/// nothing written.
[[nodiscard]] Status store_qgroup_status(std::span<u8> data, const QgroupStatusRecord& s);

/// A QGROUP_INFO item in cpu form (bytes; the _cmpr fields equal the plain
/// ones on every kernel since compression accounting was dropped).
struct QgroupInfoRecord {
  u64 generation = 0;
  u64 rfer = 0, rfer_cmpr = 0, excl = 0, excl_cmpr = 0;
  bool operator==(const QgroupInfoRecord&) const = default;
};
/// Errors: Errc::corrupt "qgroup info item of N bytes, expect at least 40".
[[nodiscard]] Result<QgroupInfoRecord> decode_qgroup_info(std::span<const u8> data);
/// The 40 bytes of `i`.
[[nodiscard]] std::vector<u8> encode_qgroup_info(const QgroupInfoRecord& i);
/// Writes `i` over the item `data` in place. Errors: as decode_qgroup_info.
[[nodiscard]] Status store_qgroup_info(std::span<u8> data, const QgroupInfoRecord& i);

/// A QGROUP_LIMIT item in cpu form (bytes; flags say which max is set).
struct QgroupLimitRecord {
  u64 flags = 0, max_rfer = 0, max_excl = 0, rsv_rfer = 0, rsv_excl = 0;
  bool operator==(const QgroupLimitRecord&) const = default;
};
/// Errors: Errc::corrupt "qgroup limit item of N bytes, expect at least 40".
[[nodiscard]] Result<QgroupLimitRecord> decode_qgroup_limit(std::span<const u8> data);
/// The 40 bytes of `l` (all zero: a qgroup without limits, as the kernel's
/// add_qgroup_item inserts it).
[[nodiscard]] std::vector<u8> encode_qgroup_limit(const QgroupLimitRecord& l);

/// A qgroup relation: `member` belongs to `parent` (a higher level).
struct QgroupRelation {
  u64 member = 0, parent = 0;
  bool operator==(const QgroupRelation&) const = default;
};
/// The relation of the QGROUP_RELATION key (a, QGROUP_RELATION, b), either
/// half: the member is the qgroup of the lower level (kernel
/// add_qgroup_relation_item stores (member, parent) and (parent, member)).
/// Errors: Errc::corrupt "relation between X and Y of the same level".
[[nodiscard]] Result<QgroupRelation> decode_qgroup_relation(const Key& key);
/// Both keys of relation `r` (no item body): (member, QGROUP_RELATION,
/// parent) and (parent, QGROUP_RELATION, member).
[[nodiscard]] std::array<Key, 2> encode_qgroup_relation(const QgroupRelation& r);

}  // namespace fsctl::format
