// SPDX-License-Identifier: GPL-2.0-only
// Codecs of subvolume and uuid tree items dump-tree and subvolume paths read:
// INODE_ITEM, INODE_REF / INODE_EXTREF (inode_items.h), DIR_ITEM (dir_item.h),
// ROOT_REF (root_ref.h), UUID_SUBVOL (uuid_item.h).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lib/format/dir_item.h"
#include "lib/format/inode_items.h"
#include "lib/format/root_ref.h"
#include "lib/format/uuid_item.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {
std::span<const u8> bytes_of(const std::string& s) { return {reinterpret_cast<const u8*>(s.data()), s.size()}; }
std::string text(std::span<const u8> b) { return std::string(b.begin(), b.end()); }
}  // namespace

TEST_CASE("inode item round trip and short item") {
  InodeRecord i;
  i.generation = 3;
  i.size = 4096;
  i.nlink = 1;
  i.mode = 0100644;
  i.mtime = {1700000000, 5};
  auto b = encode_inode_item(i);
  REQUIRE(b.size() == 160);
  auto back = decode_inode_item(b);
  REQUIRE(back);
  CHECK(*back == i);
  auto r = decode_inode_item(std::span<const u8>(b).first(159));
  REQUIRE(!r);
  CHECK(r.error().message == "inode item of 159 bytes, expect at least 160");
}

TEST_CASE("inode refs and extrefs: several names per item; overruns are corrupt") {
  std::string a = "a", bb = "bb";
  for (bool ext : {false, true}) {
    std::vector<InodeRefEntry> e = {{ext ? 256u : 0u, 2, bytes_of(a)}, {ext ? 257u : 0u, 3, bytes_of(bb)}};
    auto item = encode_inode_refs(e, ext);
    CHECK(item.size() == (ext ? 18u : 10u) * 2 + 3);
    auto back = decode_inode_refs(item, ext);
    REQUIRE(back);
    REQUIRE(back->size() == 2);
    CHECK(text((*back)[1].name) == "bb");
    CHECK((*back)[1].index == 3);
    CHECK((*back)[1].parent_objectid == (ext ? 257u : 0u));
    auto cut = decode_inode_refs(std::span<const u8>(item).first(item.size() - 1), ext);
    REQUIRE(!cut);
    CHECK(cut.error().code == Errc::corrupt);
  }
  CHECK(decode_inode_refs({}, false).value().empty());
}

TEST_CASE("dir item entries with names and xattr data") {
  std::string n1 = "file", n2 = "user.x", v2 = "value";
  std::vector<DirEntry> e = {{Key{257, 1, 0}, 7, 1, bytes_of(n1), {}}, {Key{0, 0, 0}, 8, 8, bytes_of(n2), bytes_of(v2)}};
  auto item = encode_dir_item(e);
  CHECK(item.size() == 30 + 4 + 30 + 6 + 5);
  auto back = decode_dir_item(item);
  REQUIRE(back);
  REQUIRE(back->size() == 2);
  CHECK((*back)[0].location == Key{257, 1, 0});
  CHECK(text((*back)[1].name) == "user.x");
  CHECK(text((*back)[1].data) == "value");
  auto cut = decode_dir_item(std::span<const u8>(item).first(item.size() - 2));
  REQUIRE(!cut);
  CHECK(cut.error().message.find("dir item data") != std::string::npos);
}

TEST_CASE("root ref and uuid item") {
  std::string name = "subvol";
  RootRefRecord r{256, 5, bytes_of(name)};
  auto item = encode_root_ref(r);
  CHECK(item.size() == 18 + 6);
  auto back = decode_root_ref(item);
  REQUIRE(back);
  CHECK(back->dirid == 256);
  CHECK(back->sequence == 5);
  CHECK(text(back->name) == "subvol");
  auto s = decode_root_ref(std::span<const u8>(item).first(10));
  REQUIRE(!s);
  CHECK(s.error().message == "root ref of 10 bytes, expect at least 18");
  CHECK(!decode_root_ref(std::span<const u8>(item).first(20)));  // name overruns

  auto u = encode_uuid_item({256, 257});
  CHECK(u.size() == 16);
  CHECK(decode_uuid_item(u).value() == std::vector<u64>{256, 257});
  auto bad = decode_uuid_item(std::span<const u8>(u).first(12));
  REQUIRE(!bad);
  CHECK(bad.error().code == Errc::corrupt);
}
