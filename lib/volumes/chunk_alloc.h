// SPDX-License-Identifier: GPL-2.0-only
// Chunk allocation policy: where the stripes of a new chunk go and how big it
// is, from the devices' unallocated space (kernel volumes.c btrfs_create_chunk:
// init_alloc_chunk_ctl_policy_regular, gather_device_info,
// find_free_dev_extent, decide_stripe_size_regular; space-info.c
// calc_chunk_size). A pure function of the device state: lib/transaction
// writes the items. Only lib/volumes decides physical placement.
#pragma once
#include <array>
#include <map>
#include <vector>

#include "lib/base/result.h"
#include "lib/format/chunk_item.h"

namespace fsctl::volumes {

/// Physical offset below which no chunk is placed on any device: the first
/// MiB holds the primary superblock and room for boot loaders (kernel
/// dev_extent_search_start for the regular allocation policy).
inline constexpr u64 DEV_EXTENT_SEARCH_START = 1ULL << 20;

/// One device as the chunk allocator sees it.
struct DeviceSpace {
  u64 devid = 0;
  u64 total_bytes = 0;                     // DEV_ITEM total_bytes: nothing is placed at or beyond it
  std::array<u8, format::UUID_SIZE> uuid{}; // DEV_ITEM uuid (goes into the chunk's stripes)
  std::map<u64, u64> allocated;            // physical start -> length: DEV_EXTENTs (may overlap; unioned)
  /// Marks [start, start + len) allocated, merged with the ranges it touches
  /// (a device full of adjacent chunks is then one range: planning stays
  /// cheap however many chunks there are).
  void add(u64 start, u64 len);
  /// Bytes covered by `allocated` (the DEV_ITEM bytes_used they imply).
  [[nodiscard]] u64 used_bytes() const;
};

/// A planned chunk: a format::Chunk (logical left for the caller to set,
/// owner 2, stripe_len/io_align/io_width 64 KiB, sub_stripes as the kernel
/// writes them) and the length of each stripe (= each DEV_EXTENT).
struct ChunkPlan {
  format::Chunk chunk;
  u64 stripe_size = 0;  // bytes on each device per stripe
};

/// Decides a new chunk of type and profile `flags` (BLOCK_GROUP_* type bits
/// DATA/METADATA/SYSTEM plus at most one profile bit) the way the kernel's
/// regular policy does:
///  - target chunk size: SYSTEM 32 MiB; METADATA 256 MiB, or 1 GiB when the
///    devices' total_bytes sum exceeds 50 GiB; DATA 10 GiB; the stripe at
///    most min(that, 1 GiB); the chunk at most 10% of the devices' total;
///  - per device the first hole of at least stripe*dev_stripes bytes at or
///    after DEV_EXTENT_SEARCH_START, else its largest hole; devices whose
///    hole is below 64 KiB * dev_stripes are skipped; devices ordered by hole
///    size, then unallocated bytes (then devid), counted down to a multiple
///    of devs_increment and capped at devs_max;
///  - stripe = smallest chosen hole / dev_stripes, lowered (to a 16 MiB
///    multiple, never raised) when stripe * data stripes exceeds the chunk
///    limit, at most 1 GiB, rounded down to 64 KiB; DUP puts its two stripes
///    one after the other in the same hole.
/// Returns the plan (chunk.logical = 0). Errors: Errc::invalid_argument (no
/// type bit, several profile bits), Errc::unsupported (RAID5/RAID6),
/// Errc::nospc (fewer devices with a usable hole than the profile needs).
[[nodiscard]] Result<ChunkPlan> plan_chunk(u64 flags, const std::vector<DeviceSpace>& devs, u32 sectorsize, u32 nodesize);

/// Marks the stripes of `plan` allocated in `devs` (for planning several
/// chunks in a row).
void take_plan(const ChunkPlan& plan, std::vector<DeviceSpace>& devs);

}  // namespace fsctl::volumes
