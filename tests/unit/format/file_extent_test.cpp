// SPDX-License-Identifier: GPL-2.0-only
// EXTENT_DATA codec (lib/format/file_extent.h): the three types round-trip,
// and the one size rule every caller now shares (qgroup accounting called a
// short regular item corrupt, relocation skipped it silently, dump-tree
// copied what there was): shorter than the 21-byte header, a regular or
// prealloc item that is not the 53-byte struct, or an unknown type is
// Errc::corrupt (kernel tree-checker.c check_extent_data_item).
#include <doctest/doctest.h>

#include <vector>

#include "lib/format/file_extent.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {
FileExtent regular(u8 type) {
  FileExtent fe;
  fe.generation = 11;
  fe.ram_bytes = 1 << 20;
  fe.compression = 3;
  fe.type = type;
  fe.disk_bytenr = 13631488;
  fe.disk_num_bytes = 65536;
  fe.offset = 4096;
  fe.num_bytes = 8192;
  return fe;
}
bool same(const FileExtent& a, const FileExtent& b) {
  return a.generation == b.generation && a.ram_bytes == b.ram_bytes && a.compression == b.compression &&
         a.encryption == b.encryption && a.other_encoding == b.other_encoding && a.type == b.type &&
         a.disk_bytenr == b.disk_bytenr && a.disk_num_bytes == b.disk_num_bytes && a.offset == b.offset &&
         a.num_bytes == b.num_bytes &&
         std::equal(a.inline_data.begin(), a.inline_data.end(), b.inline_data.begin(), b.inline_data.end());
}
}  // namespace

TEST_CASE("regular, prealloc and inline file extents round-trip") {
  for (u8 type : {FILE_EXTENT_REG, FILE_EXTENT_PREALLOC}) {
    FileExtent fe = regular(type);
    auto bytes = encode_file_extent(fe);
    CHECK(bytes.size() == FILE_EXTENT_ITEM_SIZE);
    CHECK(bytes[20] == type);
    auto back = decode_file_extent(bytes);
    REQUIRE(back);
    CHECK(same(*back, fe));
    CHECK(back->has_data_extent());
  }
  FileExtent hole = regular(FILE_EXTENT_REG);
  hole.disk_bytenr = 0;
  auto hb = decode_file_extent(encode_file_extent(hole));
  REQUIRE(hb);
  CHECK(!hb->has_data_extent());

  std::vector<u8> text = {'h', 'e', 'l', 'l', 'o'};
  FileExtent in;
  in.generation = 5;
  in.ram_bytes = text.size();
  in.type = FILE_EXTENT_INLINE;
  in.inline_data = text;
  auto bytes = encode_file_extent(in);
  CHECK(bytes.size() == FILE_EXTENT_INLINE_HEADER_SIZE + text.size());
  auto back = decode_file_extent(bytes);
  REQUIRE(back);
  CHECK(back->is_inline());
  CHECK(!back->has_data_extent());
  CHECK(same(*back, in));
  // An inline extent of no data is still an item of 21 bytes.
  in.inline_data = {};
  CHECK(decode_file_extent(encode_file_extent(in)));
}

TEST_CASE("file extent items that are short or inconsistent are corrupt, naming what is wrong") {
  auto reg = encode_file_extent(regular(FILE_EXTENT_REG));
  for (std::size_t n = 0; n < FILE_EXTENT_INLINE_HEADER_SIZE; ++n) {
    auto r = decode_file_extent(std::span<const u8>(reg).first(n));
    REQUIRE(!r);
    CHECK(r.error().code == Errc::corrupt);
    CHECK(r.error().message == "file extent item of " + std::to_string(n) + " bytes, expect at least 21");
  }
  for (std::size_t n = FILE_EXTENT_INLINE_HEADER_SIZE; n < FILE_EXTENT_ITEM_SIZE; ++n) {
    auto r = decode_file_extent(std::span<const u8>(reg).first(n));
    REQUIRE(!r);
    CHECK(r.error().code == Errc::corrupt);
    CHECK(r.error().message == "regular file extent item of " + std::to_string(n) + " bytes, expect 53");
  }
  auto pre = encode_file_extent(regular(FILE_EXTENT_PREALLOC));
  pre.push_back(0);  // one byte too many
  auto r = decode_file_extent(pre);
  REQUIRE(!r);
  CHECK(r.error().message == "prealloc file extent item of 54 bytes, expect 53");
  reg[20] = 3;  // no such type
  auto t = decode_file_extent(reg);
  REQUIRE(!t);
  CHECK(t.error().code == Errc::corrupt);
  CHECK(t.error().message.find("type 3") != std::string::npos);
}
