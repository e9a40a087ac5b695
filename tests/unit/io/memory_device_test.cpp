// SPDX-License-Identifier: GPL-2.0-only
// MemoryImage (lib/io/memory_device.h): sparse pages, copies that share
// pages until written, bounds, and a device over it.
#include "lib/io/memory_device.h"

#include <doctest/doctest.h>

#include <vector>

using namespace fsctl;

TEST_CASE("a memory image allocates only the pages written with data, and copies share pages until written") {
  io::MemoryImage m(256ULL << 20);
  CHECK(m.pages_allocated() == 0);
  std::vector<u8> zeros(8192, 0), data(6000, 0xab);
  CHECK(m.write(0, zeros).has_value());
  CHECK(m.pages_allocated() == 0);
  CHECK(m.write(4000, data).has_value());  // pages 0, 1 and 2
  CHECK(m.pages_allocated() == 3);

  io::MemoryImage copy = m;
  std::vector<u8> other(10, 0xcd);
  CHECK(copy.write(4096 + 100, other).has_value());
  std::vector<u8> got(10);
  CHECK(m.read(4096 + 100, got).has_value());
  CHECK(got[0] == 0xab);  // the original keeps its page
  CHECK(copy.read(4096 + 100, got).has_value());
  CHECK(got[0] == 0xcd);
  std::vector<u8> across(200);
  CHECK(copy.read(3950, across).has_value());
  CHECK(across[0] == 0);
  CHECK(across[60] == 0xab);  // physical 4010

  std::vector<u8> one(1);
  CHECK(m.read((256ULL << 20) - 1, one).has_value());
  auto past = m.read(256ULL << 20, one);
  REQUIRE_FALSE(past.has_value());
  CHECK(past.error().code == Errc::corrupt);
  auto wpast = m.write((256ULL << 20) - 1, std::vector<u8>(2, 1));
  REQUIRE_FALSE(wpast.has_value());
  CHECK(wpast.error().code == Errc::invalid_argument);
}

TEST_CASE("a memory device writes through to the image the caller keeps") {
  auto image = std::make_shared<io::MemoryImage>(1 << 20);
  auto dev = io::make_memory_device(image, "mem");
  CHECK(dev->size() == 1 << 20);
  CHECK(dev->path() == "mem");
  CHECK(dev->write_at(512, std::vector<u8>(512, 9)).has_value());
  CHECK(dev->flush().has_value());
  std::vector<u8> got(1);
  CHECK(image->read(700, got).has_value());
  CHECK(got[0] == 9);
  auto bad = dev->read_at(1 << 20, got);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("mem") == 0);
}
