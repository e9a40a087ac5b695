// SPDX-License-Identifier: GPL-2.0-only
// BlockSource: how lib/ctree obtains verified tree blocks. lib/fs implements
// it (chunk map + devices + cache), so the tree code stays below lib/fs and the
// open sequence can search trees (docs/DESIGN.md, "Layers").
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "lib/base/result.h"
#include "lib/cache/tree_block.h"
#include "lib/format/key.h"

namespace fsctl::ctree {

/// What the parent pointer (or the root item / superblock) says the child must
/// be (kernel struct btrfs_tree_parent_check). Unset fields are not checked.
struct ParentCheck {
  std::optional<u64> owner;           // header owner (roots only; shared blocks have other owners)
  u64 transid = 0;                    // expected header generation; 0 = unknown
  int level = -1;                     // expected level; -1 = unknown
  std::optional<format::Key> first_key;
};

/// A tree root: where the walk or search starts.
struct RootRef {
  u64 root_id = 0;     // tree objectid
  u64 bytenr = 0;      // logical address of the root block
  u8 level = 0;
  u64 generation = 0;  // expected header generation of the root block
};

/// One request of a batched read.
struct BlockRequest {
  u64 bytenr = 0;
  ParentCheck check;
};

class BlockSource {
 public:
  virtual ~BlockSource() = default;
  /// The verified block at logical `bytenr`: checksum, bytenr, fsid, chunk
  /// tree uuid, layout and every field of `check`. Tries each mirror; a bad
  /// mirror is reported and the next one used. Errors: Errc::csum,
  /// Errc::corrupt, Errc::io, Errc::not_found (unmapped bytenr), each naming
  /// the bytenr.
  [[nodiscard]] virtual Result<cache::TreeBlockRef> read_tree_block(u64 bytenr, const ParentCheck& check) = 0;
  /// Reads many blocks, calling `visit` for each in an order chosen for I/O
  /// (ascending physical position, coalesced into large reads). With
  /// `keep_in_cache` the blocks also enter the cache (read-ahead); otherwise
  /// they stream past it. REQUIRES: distinct bytenrs. Stops at the first
  /// error (from a read or from visit).
  [[nodiscard]] virtual Status read_tree_blocks(std::vector<BlockRequest> requests,
                                                const std::function<Status(const cache::TreeBlockRef&)>& visit,
                                                bool keep_in_cache = false) = 0;
  /// Tree block size in bytes.
  [[nodiscard]] virtual u32 nodesize() const = 0;
};

}  // namespace fsctl::ctree
