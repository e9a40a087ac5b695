// SPDX-License-Identifier: GPL-2.0-only
// The superblock checks every write runs first (write_gate.h; invariant 6).
#include "lib/fs/write_gate.h"

#include "lib/format/feature_flags.h"

namespace fsctl::fs {
using namespace fsctl::format;

namespace {
Status refuse_bits(u64 value, std::span<const FlagBit> table, const char* word) {
  for (auto& f : table)
    if ((value & f.bit) && !f.write_refusal.empty())
      return make_error(Errc::unsupported, "refusing to write " + std::string(f.write_refusal));
  if (u64 unk = unknown_bits(value, table))
    return make_error(Errc::unsupported, std::string("refusing to write a filesystem with ") + word + " bits fsctl does not know (" +
                                             hex(unk) + ")");
  return {};
}
}  // namespace

Status check_flags_writable(const SuperBlock& sb) {
  FSCTL_TRY(refuse_bits(sb.flags.get(), super_flag_bits(), "superblock flag"));
  FSCTL_TRY(refuse_bits(sb.incompat_flags.get(), incompat_bits(), "incompat feature"));
  FSCTL_TRY(refuse_bits(sb.compat_ro_flags.get(), compat_ro_bits(), "compat_ro feature"));
  return {};
}

Status check_writable(const SuperBlock& sb, bool allow_changing_bg_tree) {
  FSCTL_TRY(check_flags_writable(sb));
  if (sb.log_root.get())
    return make_error(Errc::unsupported, "log tree at " + std::to_string(sb.log_root.get()) +
                                             " needs replay: mount the filesystem once (or btrfs rescue zero-log) before writing");
  u64 cro = sb.compat_ro_flags.get();
  if (!(cro & COMPAT_RO_FREE_SPACE_TREE) || !(cro & COMPAT_RO_FREE_SPACE_TREE_VALID))
    return make_error(Errc::unsupported, "filesystem has no valid free space tree (v1 space cache): mount once with -o space_cache=v2 first; fsctl does not write v1 caches");
  if (!allow_changing_bg_tree && (sb.flags.get() & SUPER_FLAG_CHANGING_BG_TREE))
    return make_error(Errc::unsupported, "an interrupted operation is recorded in the superblock flags (CHANGING_BG_TREE): finish it first");
  return {};
}

}  // namespace fsctl::fs
