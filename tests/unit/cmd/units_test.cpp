// SPDX-License-Identifier: GPL-2.0-only
// cmd/units.h: sizes as btrfs-progs' pretty_size prints them, and the order
// rules of the unit options.
#include <doctest/doctest.h>

#include "cmd/units.h"

using namespace fsctl::cmd;
using S = UnitMode::System;
using C = UnitMode::Scale;

TEST_CASE("units: human readable, base 1024 (the default)") {
  CHECK(format_bytes(0, UNITS_HUMAN) == "0.00B");
  CHECK(format_bytes(1, UNITS_HUMAN) == "1.00B");
  CHECK(format_bytes(1023, UNITS_HUMAN) == "1023.00B");
  CHECK(format_bytes(1024, UNITS_HUMAN) == "1.00KiB");
  CHECK(format_bytes(1536, UNITS_HUMAN) == "1.50KiB");
  CHECK(format_bytes(16384, UNITS_HUMAN) == "16.00KiB");
  CHECK(format_bytes(3018752, UNITS_HUMAN) == "2.88MiB");  // btrfs qgroup show printed this
  CHECK(format_bytes(3ULL << 29, UNITS_HUMAN) == "1.50GiB");
  CHECK(format_bytes(1ULL << 40, UNITS_HUMAN) == "1.00TiB");
  CHECK(format_bytes(1ULL << 60, UNITS_HUMAN) == "1.00EiB");
  CHECK(format_bytes(~0ULL, UNITS_HUMAN) == "16.00EiB");
}

TEST_CASE("units: raw, si, fixed scales") {
  CHECK(format_bytes(0, UNITS_RAW) == "0");
  CHECK(format_bytes(3018752, UNITS_RAW) == "3018752");
  CHECK(format_bytes(~0ULL, UNITS_RAW) == "18446744073709551615");
  UnitMode si{S::decimal, C::human};
  CHECK(format_bytes(999, si) == "999.00B");
  CHECK(format_bytes(1000, si) == "1.00kB");
  CHECK(format_bytes(16384, si) == "16.38kB");
  CHECK(format_bytes(3018752, si) == "3.02MB");
  UnitMode si_k{S::decimal, C::kbytes};
  CHECK(format_bytes(3018752, si_k) == "3018.75kB");  // btrfs qgroup show --si --kbytes printed this
  CHECK(format_bytes(10485760, si_k) == "10485.76kB");
  CHECK(format_bytes(1536, UnitMode{S::binary, C::mbytes}) == "0.00MiB");
  CHECK(format_bytes(3ULL << 29, UnitMode{S::binary, C::mbytes}) == "1536.00MiB");
  CHECK(format_bytes(1ULL << 40, UnitMode{S::binary, C::gbytes}) == "1024.00GiB");
  CHECK(format_bytes(1ULL << 40, UnitMode{S::binary, C::tbytes}) == "1.00TiB");
  CHECK(format_bytes(1536, UnitMode{S::binary, C::bytes}) == "1536.00B");
}

TEST_CASE("units: signed differences and phrases") {
  CHECK(format_bytes_signed(-1536, UNITS_HUMAN) == "-1.50KiB");
  CHECK(format_bytes_signed(-1536, UNITS_RAW) == "-1536");
  CHECK(format_bytes_signed(0, UNITS_HUMAN) == "0.00B");
  CHECK(format_bytes_signed(INT64_MIN, UNITS_RAW) == "-9223372036854775808");
  CHECK(format_bytes_signed(4096, UNITS_RAW) == "4096");
  CHECK(bytes_phrase(4096, UNITS_RAW) == "4096 bytes");
  CHECK(bytes_phrase(4096, UNITS_HUMAN) == "4.00KiB");
}

TEST_CASE("units: options in the order given, as progs") {
  using V = std::vector<std::string>;
  CHECK_FALSE(unit_mode_from_args(V{"qgroup", "show", "img"}).has_value());
  CHECK(unit_mode_from_args(V{"--raw"}) == UNITS_RAW);
  CHECK(unit_mode_from_args(V{"--si"}) == UnitMode{S::decimal, C::human});
  CHECK(unit_mode_from_args(V{"--si", "--kbytes"}) == UnitMode{S::decimal, C::kbytes});
  CHECK(unit_mode_from_args(V{"--kbytes", "--si"}) == UnitMode{S::decimal, C::kbytes});
  CHECK(unit_mode_from_args(V{"--raw", "--iec"}) == UNITS_HUMAN);  // --iec keeps the scale, sets base 1024
  CHECK(unit_mode_from_args(V{"--si", "--human-readable"}) == UNITS_HUMAN);
  CHECK(unit_mode_from_args(V{"--mbytes", "--raw"}) == UNITS_RAW);
  CHECK(unit_mode_from_args(V{"--gbytes", "--tbytes"}) == UnitMode{S::binary, C::tbytes});
  // --raw then a scale: still raw (progs: the RAW system wins).
  CHECK(format_bytes(2048, *unit_mode_from_args(V{"--raw", "--kbytes"})) == "2048");
  CHECK_FALSE(unit_mode_from_args(V{"--", "--raw"}).has_value());
}
