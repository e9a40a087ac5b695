// SPDX-License-Identifier: GPL-2.0-only
// FaultDevice and its shared FaultBudget (lib/io/fault_device.h): the first
// N write requests of all devices sharing a budget land, then every write is
// dropped and every flush fails with Errc::io naming the fail point; reads
// go on; wrappers compose (DESIGN.md "Testing").
#include "lib/io/fault_device.h"

#include <doctest/doctest.h>

#include <vector>

#include "lib/io/memory_device.h"

using namespace fsctl;

namespace {
std::vector<u8> bytes(u8 v) { return std::vector<u8>(4096, v); }
u8 first_byte(const io::MemoryImage& m, u64 physical) {
  std::vector<u8> b(1);
  REQUIRE(m.read(physical, b).has_value());
  return b[0];
}
}  // namespace

TEST_CASE("a budget of 3 shared by two devices: three writes land, the fourth is dropped, flush fails after") {
  auto a = std::make_shared<io::MemoryImage>(1 << 20), b = std::make_shared<io::MemoryImage>(1 << 20);
  auto budget = std::make_shared<io::FaultBudget>(3);
  auto wrap = io::fault_wrapper(budget);
  auto da = wrap(io::make_memory_device(a, "a")), db = wrap(io::make_memory_device(b, "b"));
  CHECK(da->write_at(0, bytes(1)).has_value());
  CHECK(da->flush().has_value());  // before the fail point a flush passes through
  CHECK(db->write_at(0, bytes(2)).has_value());
  CHECK_FALSE(budget->tripped());
  CHECK(da->write_at(4096, bytes(3)).has_value());
  CHECK(budget->tripped());  // the N-th write trips it: nothing after it reaches a device
  auto dropped = db->write_at(4096, bytes(4));
  REQUIRE_FALSE(dropped.has_value());
  CHECK(dropped.error().code == Errc::io);
  CHECK(dropped.error().message.find("fail point") != std::string::npos);
  CHECK(dropped.error().message.find("b:") == 0);
  auto fl = da->flush();
  REQUIRE_FALSE(fl.has_value());
  CHECK(fl.error().code == Errc::io);
  CHECK(budget->writes() == 3);
  CHECK(budget->dropped() == 1);
  CHECK(first_byte(*a, 0) == 1);
  CHECK(first_byte(*b, 0) == 2);
  CHECK(first_byte(*a, 4096) == 3);
  CHECK(first_byte(*b, 4096) == 0);
  std::vector<u8> r(4096);
  CHECK(db->read_at(0, r).has_value());  // reads still pass
  CHECK(r[0] == 2);
}

TEST_CASE("wrappers compose, the inner one first") {
  auto m = std::make_shared<io::MemoryImage>(1 << 20);
  auto inner = std::make_shared<io::FaultBudget>(1), outer = std::make_shared<io::FaultBudget>(100);
  auto d = io::compose_wrappers(io::fault_wrapper(inner), io::fault_wrapper(outer))(io::make_memory_device(m));
  CHECK(d->write_at(0, bytes(7)).has_value());
  CHECK_FALSE(d->write_at(4096, bytes(8)).has_value());
  CHECK(outer->writes() == 2);  // the outer device passed both down; the inner one dropped the second
  CHECK(inner->writes() == 1);
  CHECK(inner->dropped() == 1);
  CHECK_FALSE(io::compose_wrappers({}, {}));
}
