// SPDX-License-Identifier: GPL-2.0-only
// ChunkMap: logical → physical translation per chunk and RAID profile
// (kernel volumes.c __btrfs_map_block). Only lib/volumes turns logical into physical.
#pragma once
#include <map>
#include <utility>
#include <vector>

#include "lib/base/result.h"
#include "lib/format/chunk_item.h"

namespace fsctl::volumes {

/// Where one copy of a logical range lives.
struct PhysicalRange {
  u64 devid = 0;
  u64 physical = 0;  // byte offset on the device
};

/// Logical ranges [start, end) of `chunk` whose physical bytes hold a
/// superblock copy (kernel block-group.c exclude_super_stripes: one
/// stripe_len-aligned STRIPE_LEN range per copy that falls into a stripe; a
/// striped profile yields the whole chunk, conservatively). Tree blocks must
/// never be placed there: the free space tree lists these ranges as free.
[[nodiscard]] std::vector<std::pair<u64, u64>> super_mirror_ranges(const format::Chunk& chunk);

class ChunkMap {
 public:
  /// Adds a chunk; a chunk equal to an existing one is ignored (the
  /// sys_chunk_array and the chunk tree both carry system chunks). Errors:
  /// Errc::corrupt when it overlaps a different chunk.
  [[nodiscard]] Status add(const format::Chunk& chunk);
  /// The chunk containing `logical`, or nullptr.
  [[nodiscard]] const format::Chunk* find(u64 logical) const;
  /// Every copy of [logical, logical+len), one entry per mirror (mirror 0
  /// first). REQUIRES: the range does not cross a stripe boundary (tree
  /// blocks never do: they are nodesize-aligned and nodesize <= stripe_len).
  /// Errors: Errc::not_found (no chunk maps `logical`), Errc::corrupt (range
  /// crosses the chunk end or a stripe boundary), Errc::unsupported (RAID5/6).
  [[nodiscard]] Result<std::vector<PhysicalRange>> map(u64 logical, u64 len) const;
  [[nodiscard]] const std::map<u64, format::Chunk>& chunks() const { return chunks_; }
  /// Removes the chunk starting at `logical` (write side: a chunk removed by
  /// a transaction). Returns false when no chunk starts there.
  bool remove(u64 logical) { return chunks_.erase(logical) > 0; }

 private:
  std::map<u64, format::Chunk> chunks_;  // by logical start
};

}  // namespace fsctl::volumes
