// SPDX-License-Identifier: GPL-2.0-only
// DataRefs: the (data extent, root set) pairs met while walking subvolume
// leaves, merged per extent. Memory is bounded: past a budget, the buffer is
// sorted, merged and spilled to an unlinked temporary file as an lz4
// compressed run; the runs are merged at the end (DESIGN.md invariant 5).
#pragma once
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

#include "lib/base/result.h"
#include "lib/ctree/tree_walk.h"

namespace fsctl::qgroup {

/// One reference of a data extent by a leaf with root set `rootset`.
struct DataRef {
  u64 bytenr;     // logical start of the extent (disk_bytenr)
  u64 num_bytes;  // disk_num_bytes
  u32 rootset;    // id in the walk's RootSets
};

/// A DataRef as DataRefs keeps it in memory and in its spill file: 16
/// bytes, not 24, for the millions of references of a large filesystem
/// (on a VM that backs fresh pages lazily their first touch was 30% of one
/// cold `qgroup verify`'s samples; warm runs are no faster: bench/RESULTS.md). num_bytes in units of 4 KiB:
/// disk_num_bytes is a multiple of the sectorsize, at least 4 KiB (kernel
/// tree-checker.c check_extent_data_item, CHECK_FE_ALIGNED).
struct PackedDataRef {
  u64 bytenr;
  u32 num_4k;  // disk_num_bytes / 4096
  u32 rootset;
};
static_assert(sizeof(PackedDataRef) == 16);

class DataRefs {
 public:
  /// `budget_bytes`: the most memory the in-memory buffer may use.
  DataRefs(ctree::RootSets& sets, u64 budget_bytes);
  ~DataRefs();
  DataRefs(const DataRefs&) = delete;
  DataRefs& operator=(const DataRefs&) = delete;

  /// Records one reference. Errors: Errc::io when spilling fails;
  /// Errc::corrupt when num_bytes is 0, not a multiple of 4 KiB or 16 TiB
  /// and more (no valid file extent item has such a disk_num_bytes).
  [[nodiscard]] Status add(const DataRef& r);
  /// Calls `visit(bytenr, num_bytes, rootset)` once per distinct extent, in
  /// ascending bytenr, with the union of the root sets of all its references.
  /// Errors: Errc::io, Errc::corrupt (a damaged spill file).
  [[nodiscard]] Status for_each_extent(const std::function<void(u64, u64, u32)>& visit);
  /// Runs written to the temporary file (0 when everything fit in memory).
  [[nodiscard]] u64 spilled_runs() const { return spilled_; }
  /// Intermediate merges of `fan-in` runs into one (0 unless many runs were spilled).
  [[nodiscard]] u64 merge_passes() const { return merge_passes_; }

 private:
  struct Run {
    long offset;  // byte offset of the run in the file
    u64 records;
  };
  void sort_and_merge();
  Status spill();
  Status merge_runs(std::size_t first, std::size_t last, const std::function<Status(const PackedDataRef&)>& out);

  ctree::RootSets& sets_;
  std::vector<u32> set_ids_;  // one extent's root sets, for unite_all
  u64 budget_bytes_;
  std::size_t max_records_;
  u64 merge_passes_ = 0;
  u64 spilled_ = 0;
  std::vector<PackedDataRef> buf_;
  std::FILE* file_ = nullptr;
  std::vector<Run> runs_;
};

}  // namespace fsctl::qgroup
