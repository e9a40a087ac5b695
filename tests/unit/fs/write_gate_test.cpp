// SPDX-License-Identifier: GPL-2.0-only
// The write gate refuses, by name, every superblock that must not be written
// (write_gate.h; issue 12: a seed device was written and its sprouts broke).
#include "lib/fs/write_gate.h"

#include <doctest/doctest.h>

#include <string>

using namespace fsctl;
using namespace fsctl::format;

namespace {
SuperBlock writable_super() {
  SuperBlock sb{};
  sb.flags.set(HEADER_FLAG_WRITTEN);
  sb.incompat_flags.set(INCOMPAT_MIXED_BACKREF | INCOMPAT_EXTENDED_IREF | INCOMPAT_SKINNY_METADATA | INCOMPAT_NO_HOLES);
  sb.compat_ro_flags.set(COMPAT_RO_FREE_SPACE_TREE | COMPAT_RO_FREE_SPACE_TREE_VALID);
  return sb;
}
std::string refusal(const SuperBlock& sb) {
  auto r = fs::check_writable(sb, false);
  if (r) return "";
  CHECK(r.error().code == Errc::unsupported);
  return r.error().message;
}
}  // namespace

TEST_CASE("a plain skinny filesystem with a free space tree may be written") {
  CHECK(fs::check_writable(writable_super(), false));
}

TEST_CASE("without skinny metadata too (tree block items in the old form; issue 12)") {
  SuperBlock sb = writable_super();
  sb.incompat_flags.set(sb.incompat_flags.get() & ~INCOMPAT_SKINNY_METADATA);
  CHECK(fs::check_writable(sb, false));
  sb.compat_ro_flags.set(0);
  CHECK(refusal(sb).find("free space tree") != std::string::npos);
}

TEST_CASE("seed, btrfs-image restores, ERROR and interrupted changes are refused by name") {
  for (auto [bit, name] : {std::pair{SUPER_FLAG_SEEDING, "SEEDING"}, std::pair{SUPER_FLAG_METADUMP, "METADUMP"},
                           std::pair{SUPER_FLAG_METADUMP_V2, "METADUMP_V2"}, std::pair{SUPER_FLAG_ERROR, "ERROR"},
                           std::pair{SUPER_FLAG_CHANGING_FSID, "CHANGING_FSID"},
                           std::pair{SUPER_FLAG_CHANGING_DATA_CSUM, "CHANGING_DATA_CSUM"}}) {
    SuperBlock sb = writable_super();
    sb.flags.set(sb.flags.get() | bit);
    CHECK(refusal(sb).find(name) != std::string::npos);
    CHECK(!fs::check_flags_writable(sb));
  }
}

TEST_CASE("unknown bits of every flag word are refused in hex") {
  SuperBlock sb = writable_super();
  sb.flags.set(sb.flags.get() | (1ULL << 37));
  CHECK(refusal(sb).find("(0x2000000000)") != std::string::npos);
  sb = writable_super();
  sb.compat_ro_flags.set(sb.compat_ro_flags.get() | (1ULL << 20));
  CHECK(refusal(sb).find("(0x100000)") != std::string::npos);
  sb = writable_super();
  sb.incompat_flags.set(sb.incompat_flags.get() | INCOMPAT_ZONED);
  CHECK(refusal(sb).find("ZONED") != std::string::npos);
}

TEST_CASE("CHANGING_BG_TREE: allowed for the conversion only") {
  SuperBlock sb = writable_super();
  sb.flags.set(sb.flags.get() | SUPER_FLAG_CHANGING_BG_TREE);
  CHECK(fs::check_flags_writable(sb));
  CHECK(fs::check_writable(sb, true));
  CHECK(refusal(sb).find("CHANGING_BG_TREE") != std::string::npos);
}
