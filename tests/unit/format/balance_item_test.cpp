// SPDX-License-Identifier: GPL-2.0-only
// BALANCE_ITEM codec (lib/format/balance_item.h): flags of a 448-byte item,
// other sizes refused, type names.
#include <doctest/doctest.h>

#include <vector>

#include "lib/format/balance_item.h"

using namespace fsctl;
using namespace fsctl::format;

TEST_CASE("balance item: flags of a 448-byte item") {
  std::vector<u8> item(BALANCE_ITEM_SIZE, 0);
  item[0] = static_cast<u8>(BALANCE_FLAG_METADATA | BALANCE_FLAG_SYSTEM);
  item[1] = 0x01;  // bit 8: not a type, kept
  auto r = decode_balance_item(item);
  REQUIRE(r);
  CHECK(r->flags == (BALANCE_FLAG_METADATA | BALANCE_FLAG_SYSTEM | 0x100));
  CHECK(balance_types_to_string(r->flags) == "metadata, system");
  CHECK(balance_types_to_string(BALANCE_FLAG_DATA) == "data");
  CHECK(balance_types_to_string(BALANCE_FLAG_FORCE) == "no type");
}

TEST_CASE("balance item: a short or long item is corrupt") {
  for (std::size_t n : {0UL, 8UL, 447UL, 449UL}) {
    std::vector<u8> item(n, 0);
    auto r = decode_balance_item(item);
    REQUIRE(!r);
    CHECK(r.error().code == Errc::corrupt);
    CHECK(r.error().message.find("balance item of " + std::to_string(n) + " bytes") != std::string::npos);
  }
}
