// SPDX-License-Identifier: GPL-2.0-only
// Checksums against published check values and btrfs's data-ref hash.
#include "lib/format/csum.h"

#include <doctest/doctest.h>

#include <string>

#include "lib/format/extent_item.h"
#include "lib/format/le.h"

using namespace fsctl;
using namespace fsctl::format;

static std::span<const u8> bytes_of(const std::string& s) { return {reinterpret_cast<const u8*>(s.data()), s.size()}; }

TEST_CASE("crc32c check value") {
  auto c = compute_csum(CSUM_TYPE_CRC32, bytes_of("123456789"));
  CHECK(load_le<u32>(c.data()) == 0xE3069283u);  // CRC-32C (Castagnoli) check value
  CHECK(csum_size(CSUM_TYPE_CRC32) == 4);
}

TEST_CASE("xxhash64 of empty input") {
  auto c = compute_csum(CSUM_TYPE_XXHASH, {});
  CHECK(load_le<u64>(c.data()) == 0xEF46DB3751D8E999ULL);  // XXH64("", seed 0)
}

TEST_CASE("sha256 of abc") {
  auto c = compute_csum(CSUM_TYPE_SHA256, bytes_of("abc"));
  CHECK(csum_to_hex(CSUM_TYPE_SHA256, c) == "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("blake2b-256 of empty input") {
  auto c = compute_csum(CSUM_TYPE_BLAKE2, {});
  CHECK(csum_to_hex(CSUM_TYPE_BLAKE2, c) == "0x0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
}
