// SPDX-License-Identifier: GPL-2.0-only
// Names for key types, tree objectids, flags and profiles, spelled as
// btrfs-progs prints them so users can cross-check (print-tree.c).
#pragma once
#include <optional>
#include <string>

#include "lib/base/ints.h"

namespace fsctl::format {

/// "INODE_ITEM", "EXTENT_DATA", ...; "UNKNOWN.<n>" for others (as progs).
[[nodiscard]] std::string key_type_name(u8 type);
/// Tree name for a root objectid ("ROOT_TREE", "EXTENT_TREE", "FS_TREE", ...);
/// the decimal number for subvolumes and unknown ids.
[[nodiscard]] std::string tree_name(u64 root_id);
/// Parses a tree given by name ("root", "extent", "chunk", "dev", "fs", "csum",
/// "quota", "uuid", "free-space", "block-group", "data-reloc", upper case with
/// _TREE also accepted) or number (also negative). std::nullopt when unknown.
[[nodiscard]] std::optional<u64> parse_tree_id(const std::string& text);
/// Block group / chunk flags as "METADATA|DUP"; "DATA" for single data.
[[nodiscard]] std::string block_group_flags_to_string(u64 flags);
/// Profile name of flags: "single", "dup", "raid0", "raid1", "raid10",
/// "raid5", "raid6", "raid1c3", "raid1c4".
[[nodiscard]] std::string profile_name(u64 flags);
// Names of the superblock's flag words' bits: flag_names() in feature_flags.h.

}  // namespace fsctl::format
