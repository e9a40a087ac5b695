// SPDX-License-Identifier: GPL-2.0-only
// The superblock's three flag words (flags, compat_ro_flags, incompat_flags):
// one table per word of the bits fsctl knows, with the kernel's names
// (BTRFS_SUPER_FLAG_*, BTRFS_FEATURE_COMPAT_RO_*, BTRFS_FEATURE_INCOMPAT_*
// in the kernel's btrfs_tree.h and fs.h), whether fsctl reads a filesystem
// that has the bit, and why it must not write one (DESIGN.md invariant 6).
// The same tables name the bits in `inspect dump-super` and in refusals.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "lib/base/ints.h"

namespace fsctl::format {

/// One known bit of a superblock flag word.
struct FlagBit {
  u64 bit = 0;
  std::string_view name;  ///< the kernel's name without its BTRFS_..._ prefix ("SEEDING", "ZONED")
  bool readable = true;   ///< fsctl understands the on-disk format this bit announces
  /// Empty when fsctl may write a filesystem with this bit set; otherwise what
  /// such a filesystem is and why not, completing "refusing to write <...>".
  std::string_view write_refusal;
};

/// The tables, bits ascending. Source: kernel include/uapi/linux/btrfs.h and
/// btrfs_tree.h (feature and super flag definitions), ../shared/FORMAT.md 3.11.
[[nodiscard]] std::span<const FlagBit> super_flag_bits();
[[nodiscard]] std::span<const FlagBit> compat_ro_bits();
[[nodiscard]] std::span<const FlagBit> incompat_bits();

/// Bits of `value` that are not in `table` (0 when every set bit is known).
[[nodiscard]] u64 unknown_bits(u64 value, std::span<const FlagBit> table);
/// Bits of `value` that are in `table` but not readable, plus the unknown ones.
[[nodiscard]] u64 unreadable_bits(u64 value, std::span<const FlagBit> table);

/// Names of the set bits of `value` joined with " | ", unknown bits last as
/// "unknown 0x..." (hex). Empty string for 0.
[[nodiscard]] std::string flag_names(u64 value, std::span<const FlagBit> table);

/// `v` as lower-case hex with a 0x prefix ("0x1000"). Every hex number in a
/// message goes through this (a decimal after "0x" misled users: 0x4096).
[[nodiscard]] std::string hex(u64 v);

}  // namespace fsctl::format
