// SPDX-License-Identifier: GPL-2.0-only
// Canonical dump of a filesystem for the crash tests (DESIGN.md invariant 3):
// the superblock's feature and state fields and every item (tree, key,
// bytes) of every tree, read through the verifying block layer, so two
// states compare with ==. A mode leaves out what legitimately depends on
// where metadata was placed (see DumpMode).
#pragma once
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "lib/fs/fs_info.h"

namespace fsctl::testing {

enum class DumpMode {
  /// Every item byte for byte, the superblock's generation included: two
  /// runs that committed the same changes at the same transids compare equal.
  exact,
  /// For balance: the result of a rerun after a crash relocates again what
  /// the crashed run had already put in new chunks (a rerun selects every
  /// metadata group, new ones included), so where tree blocks, chunks and
  /// dev extents ended up and the generations of the commits differ from an
  /// uninterrupted run's. Left out: the chunk, dev, free space and block
  /// group trees, the extent tree's tree-block items (METADATA_ITEM and
  /// their keyed refs) and every tree-block bytenr (SHARED_DATA_REF parents,
  /// keyed or inline in a data EXTENT_ITEM, whose other fields stay),
  /// ROOT_ITEM bytenr/level/generation/generation_v2, QGROUP_STATUS
  /// generation and the superblock's generation. Kept byte for byte: every
  /// subvolume tree, the csum, uuid and quota trees (QGROUP_INFO numbers and
  /// generations: balance must not change them), data extent items, root
  /// refs, and the superblock's flags and feature bits.
  placement_free,
};

/// One filesystem state. `items` maps (tree id, key) to the item's bytes.
/// Two dumps are equal when `super` and `items` are (`super` holds the
/// generation in DumpMode::exact only).
struct TreeDump {
  std::string super;  // "[generation G ]flags F compat_ro C incompat I[ bytes_used B]"
  std::map<std::tuple<u64, format::Key>, std::vector<u8>> items;
  u64 generation = 0;  // the superblock's, for the caller
  bool operator==(const TreeDump& o) const { return super == o.super && items == o.items; }
};

/// Reads every tree of `fs` (root and chunk tree from the superblock, every
/// ROOT_ITEM's tree) item by item. Errors: read errors (a block failing
/// verification) naming the tree.
[[nodiscard]] Result<TreeDump> dump_trees(fs::FsInfo& fs, DumpMode mode);

/// The first `max` differences between `a` and `b`, one line each (empty
/// when equal), for failure messages.
[[nodiscard]] std::string describe_difference(const TreeDump& a, const TreeDump& b, std::size_t max = 8);

}  // namespace fsctl::testing
