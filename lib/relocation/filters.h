// SPDX-License-Identifier: GPL-2.0-only
// Balance filters with the kernel's names and meanings (kernel volumes.c
// should_balance_chunk and its chunk_*_filter helpers; btrfs-balance(8)
// "FILTERS"): which block groups `fsctl balance` relocates.
#pragma once
#include <optional>
#include <string>

#include "lib/base/result.h"
#include "lib/format/chunk_item.h"

namespace fsctl::relocation {

/// A parsed filter string such as "usage=50,limit=2" or "convert=dup,soft".
/// Ranges are "A..B", "A.." or "..B"; a bare "N" for usage means 0..N and for
/// limit means at most N. Physical (drange) and logical (vrange) bounds are
/// bytes; the end is exclusive, as in the kernel.
struct BalanceFilters {
  std::optional<u64> usage_min, usage_max;  // percent of the block group's length
  std::optional<u64> limit_min, limit_max;  // block groups processed
  std::optional<u64> devid;
  std::optional<u64> drange_start, drange_end;  // physical, on `devid`
  std::optional<u64> vrange_start, vrange_end;  // logical
  std::optional<u64> stripes_min, stripes_max;
  u64 profiles = 0;       // BLOCK_GROUP_* profile bits; single is PROFILE_SINGLE
  bool has_profiles = false;
  std::optional<u64> convert;  // target profile bits (0 = single)
  bool soft = false;           // with convert: skip block groups already in the target profile

  /// Profile bit standing for "single" in `profiles` (the kernel's
  /// BTRFS_AVAIL_ALLOC_BIT_SINGLE, 1 << 48).
  static constexpr u64 PROFILE_SINGLE = 1ULL << 48;

  /// Parses "name=value,..." (empty: no filter). Errors: Errc::invalid_argument
  /// naming the bad filter (unknown name, bad number or range, unknown
  /// profile, drange without devid, soft without convert).
  [[nodiscard]] static Result<BalanceFilters> parse(const std::string& text);

  /// Whether the block group of `chunk` with `used` bytes passes every filter
  /// except limit (kernel should_balance_chunk).
  [[nodiscard]] bool matches(const format::Chunk& chunk, u64 used) const;
};

/// Profile bits of a profile name ("single" -> 0, "dup", "raid1", "raid1c3",
/// "raid1c4", "raid10", "raid0", "raid5", "raid6"); nullopt when unknown.
[[nodiscard]] std::optional<u64> profile_from_name(const std::string& name);

}  // namespace fsctl::relocation
