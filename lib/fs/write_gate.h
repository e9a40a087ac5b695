// SPDX-License-Identifier: GPL-2.0-only
// Whether fsctl may write a filesystem, from its superblock alone
// (DESIGN.md invariant 6): the superblock flags, compat_ro and incompat bits
// of lib/format/feature_flags.h, a log tree, the free space tree. (Skinny
// metadata is not needed: tree block extent items are read in both forms
// and written in the form the SKINNY_METADATA bit says.) One place, so that every write path (the write open and
// Transaction::start, dry runs included) refuses the same things.
#pragma once
#include "lib/base/result.h"
#include "lib/format/super.h"

namespace fsctl::fs {

/// Refusals that hold for every write command, checked when the devices are
/// opened for writing, before anything else: a flag or feature bit whose
/// FlagBit has a write_refusal (SEEDING, METADUMP, METADUMP_V2, ERROR, an
/// interrupted fsid or checksum change, ZONED, ...) and every bit of the
/// three words that fsctl does not know (the kernel itself refuses unknown
/// super flags and incompat bits, and mounts unknown compat_ro read-only).
/// CHANGING_BG_TREE is not refused here (convert resumes it).
/// Errors: Errc::unsupported naming the flag, or the unknown bits in hex.
[[nodiscard]] Status check_flags_writable(const format::SuperBlock& sb);

/// What Transaction::start refuses: check_flags_writable, plus a log tree
/// that needs replay, a filesystem without a valid free space tree, and CHANGING_BG_TREE unless
/// `allow_changing_bg_tree` (the conversion's own half state).
/// Errors: Errc::unsupported.
[[nodiscard]] Status check_writable(const format::SuperBlock& sb, bool allow_changing_bg_tree);

}  // namespace fsctl::fs
