// SPDX-License-Identifier: GPL-2.0-only
// Size rendering with progs' rules (common/units.c behaviour: single
// precision division, "%.2f" and a suffix) and the unit options.
#include "cmd/units.h"

#include <cstdio>

namespace fsctl::cmd {

namespace {

constexpr const char* SUFFIX_BINARY[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
constexpr const char* SUFFIX_DECIMAL[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};

int fixed_divisions(UnitMode::Scale s) {
  switch (s) {
    case UnitMode::Scale::bytes: return 0;
    case UnitMode::Scale::kbytes: return 1;
    case UnitMode::Scale::mbytes: return 2;
    case UnitMode::Scale::gbytes: return 3;
    case UnitMode::Scale::tbytes: return 4;
    case UnitMode::Scale::human: break;
  }
  return -1;
}

// Magnitude `mag` (the absolute value) with sign `negative`.
std::string format(u64 mag, bool negative, UnitMode mode) {
  char buf[48];
  if (mode.raw()) {
    std::snprintf(buf, sizeof buf, "%s%llu", negative && mag ? "-" : "", static_cast<unsigned long long>(mag));
    return buf;
  }
  const u64 mult = mode.system == UnitMode::System::decimal ? 1000 : 1024;
  const char* const* suffix = mode.system == UnitMode::System::decimal ? SUFFIX_DECIMAL : SUFFIX_BINARY;
  int divs = fixed_divisions(mode.scale);
  u64 base = 1;
  u64 last = mag;
  if (divs >= 0) {
    for (int i = 0; i < divs; ++i) base *= mult;
  } else {
    // Human: divide while the number is at least one unit; the fraction is
    // the value before the last division over one unit (progs keeps the
    // undivided remainder that way).
    divs = 0;
    u64 m = mag;
    while (m >= mult && divs < 6) {
      last = m;
      m /= mult;
      ++divs;
    }
    base = divs ? mult : 1;
  }
  // progs divides in single precision; so do we, for the same last digit.
  float fraction = static_cast<float>(last) / static_cast<float>(base);
  std::snprintf(buf, sizeof buf, "%s%.2f%s", negative && mag ? "-" : "", static_cast<double>(fraction), suffix[divs]);
  return buf;
}

}  // namespace

std::string format_bytes(u64 bytes, UnitMode mode) { return format(bytes, false, mode); }

std::string format_bytes_signed(s64 bytes, UnitMode mode) {
  u64 mag = bytes < 0 ? 0 - static_cast<u64>(bytes) : static_cast<u64>(bytes);
  return format(mag, bytes < 0, mode);
}

std::string bytes_phrase(u64 bytes, UnitMode mode) {
  return mode.raw() ? std::to_string(bytes) + " bytes" : format_bytes(bytes, mode);
}

const std::vector<std::string>& unit_option_names() {
  static const std::vector<std::string> names = {"--raw",    "--human-readable", "--iec",    "--si",
                                                 "--kbytes", "--mbytes",         "--gbytes", "--tbytes"};
  return names;
}

std::optional<UnitMode> unit_mode_from_args(const std::vector<std::string>& args) {
  std::optional<UnitMode> m;
  for (const auto& a : args) {
    if (a == "--") break;
    UnitMode cur = m.value_or(UNITS_HUMAN);
    if (a == "--raw") {
      cur = UNITS_RAW;
    } else if (a == "--human-readable") {
      cur = UNITS_HUMAN;
    } else if (a == "--iec") {
      cur.system = UnitMode::System::binary;
    } else if (a == "--si") {
      cur.system = UnitMode::System::decimal;
    } else if (a == "--kbytes") {
      cur.scale = UnitMode::Scale::kbytes;
    } else if (a == "--mbytes") {
      cur.scale = UnitMode::Scale::mbytes;
    } else if (a == "--gbytes") {
      cur.scale = UnitMode::Scale::gbytes;
    } else if (a == "--tbytes") {
      cur.scale = UnitMode::Scale::tbytes;
    } else {
      continue;
    }
    m = cur;
  }
  return m;
}

}  // namespace fsctl::cmd
