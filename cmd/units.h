// SPDX-License-Identifier: GPL-2.0-only
// Sizes in text output: the unit options of btrfs-progs (--raw,
// --human-readable, --iec, --si, --kbytes ... --tbytes) and their rendering
// (progs' pretty_size: two decimals and a suffix, e.g. "1.50GiB"). JSON output
// never goes through this: it stays in bytes.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "lib/base/ints.h"

namespace fsctl::cmd {

/// How sizes are printed; the pair (system, scale) of progs' unit_mode.
struct UnitMode {
  /// raw: plain bytes, no suffix; binary: base 1024 (KiB, MiB, ...);
  /// decimal: base 1000 (kB, MB, ...).
  enum class System { raw, binary, decimal };
  /// human: the largest unit that keeps the number >= 1; the others fix it.
  enum class Scale { human, bytes, kbytes, mbytes, gbytes, tbytes };
  System system = System::binary;
  Scale scale = Scale::human;

  [[nodiscard]] bool raw() const { return system == System::raw; }
  friend bool operator==(const UnitMode&, const UnitMode&) = default;
};

/// Human readable, base 1024: the default of progs' tables.
inline constexpr UnitMode UNITS_HUMAN{UnitMode::System::binary, UnitMode::Scale::human};
/// Plain bytes (--raw).
inline constexpr UnitMode UNITS_RAW{UnitMode::System::raw, UnitMode::Scale::human};

/// `bytes` as progs prints it: raw -> "1536"; human binary -> "1.50KiB";
/// --si -> "1.54kB"; a fixed scale divides by that unit ("--mbytes": 0.00MiB
/// for 1536). Values below one unit in human mode keep the unit "B"
/// ("0.00B", "512.00B"). Never fails.
[[nodiscard]] std::string format_bytes(u64 bytes, UnitMode mode);
/// The same for a signed difference ("-1.50KiB", raw "-1536").
[[nodiscard]] std::string format_bytes_signed(s64 bytes, UnitMode mode);
/// A size in a sentence: raw -> "1536 bytes", otherwise format_bytes
/// ("1.50KiB"). Used by the summaries ("... used (... reserved)").
[[nodiscard]] std::string bytes_phrase(u64 bytes, UnitMode mode);

/// The global unit options, in the order they are given, as progs'
/// get_unit_mode_from_arg: --raw and --human-readable set both parts, --iec
/// and --si the system, --kbytes ... --tbytes the scale. Arguments after
/// "--" are not looked at. nullopt when none is given (each output keeps its
/// own default then).
[[nodiscard]] std::optional<UnitMode> unit_mode_from_args(const std::vector<std::string>& args);

/// The long option names unit_mode_from_args reads (for registration and help).
[[nodiscard]] const std::vector<std::string>& unit_option_names();

}  // namespace fsctl::cmd
