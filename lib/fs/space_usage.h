// SPDX-License-Identifier: GPL-2.0-only
// Space of an unmounted filesystem as `btrfs filesystem usage` shows it for
// a mounted one: per device its size, allocated (the stripes of its chunks)
// and unallocated bytes; per block group type and profile the logical size,
// used bytes and the physical bytes on each device; and how much a metadata
// balance could give back to unallocated space. Facts: chunk items and
// their stripes (kernel volumes.c: a stripe's physical length is the chunk
// length over its data stripes), DEV_ITEM total_bytes, block group used.
#pragma once
#include <map>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/fs/fs_info.h"

namespace fsctl::fs {

struct DeviceUsage {
  u64 devid = 0;
  u64 total_bytes = 0;  // DEV_ITEM total_bytes
  u64 allocated = 0;    // stripes of chunks on it
  [[nodiscard]] u64 unallocated() const { return total_bytes > allocated ? total_bytes - allocated : 0; }
};

/// One block group type with one profile, e.g. METADATA|DUP.
struct ProfileUsage {
  u64 flags = 0;        // BLOCK_GROUP_* type and profile bits
  u64 chunks = 0;
  u64 size = 0;         // logical bytes of its chunks
  u64 used = 0;         // block group used
  std::map<u64, u64> physical;  // devid -> bytes of its stripes there
  /// Metadata and system: physical bytes a balance of this kind could give
  /// back to unallocated space, at most: the chunks emptied when the used
  /// bytes are packed into the fewest chunks, least used first (an upper
  /// bound; a real run needs room for copy-on-write and its reservation).
  u64 reclaimable = 0;
};

struct SpaceUsage {
  std::vector<DeviceUsage> devices;    // by devid
  std::vector<ProfileUsage> profiles;  // data, metadata, system; by flags within a type
  u64 total_bytes = 0, allocated = 0, unallocated = 0;
  u64 used = 0;  // block group used, times the profile's copies (physical)
};

/// REQUIRES: `fs` opened with block groups loaded. Errors: Errc::corrupt
/// for a block group without a chunk or a chunk with an unknown profile.
[[nodiscard]] Result<SpaceUsage> space_usage(const FsInfo& fs);

}  // namespace fsctl::fs
