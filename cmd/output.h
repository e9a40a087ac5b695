// SPDX-License-Identifier: GPL-2.0-only
// Front-end plumbing: global options, exit codes (one table, documented in
// man/fsctl.8), the stderr reporter, and the JSON header.
#pragma once
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include <optional>
#include <string_view>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/reporter.h"
#include "lib/base/result.h"
#include "cmd/progress.h"
#include "cmd/units.h"

namespace fsctl::cmd {

/// Exit codes of every fsctl command (man/fsctl.8 "EXIT STATUS").
enum ExitCode : int {
  EXIT_OK = 0,           // success; for verify/check: everything matched
  EXIT_PROBLEMS = 1,     // verify/check found mismatches or errors in the filesystem
  EXIT_USAGE = 2,        // bad command line or argument
  EXIT_CORRUPT = 3,      // I/O error, bad checksum or corrupt metadata stopped the command
  EXIT_UNSUPPORTED = 4,  // valid filesystem using something fsctl does not handle
  EXIT_BUSY = 5,         // device mounted or in use
  EXIT_NOSPC = 6,        // not enough space (reported before anything was written)
  EXIT_NO_QUOTA = 7,     // qgroup verify: quota is not enabled, nothing to verify
  EXIT_INTERRUPTED = 130,  // a write command stopped early by SIGINT/SIGTERM/SIGHUP (cmd/interrupt.h)
};

/// Exit code for an error category.
[[nodiscard]] int exit_code_for(Errc code);

enum class Format { text, json };

class EnvHooks;  // env_hooks.h

struct GlobalOptions {
  Format format = Format::text;
  int verbose = 0;
  bool quiet = false;
  /// --progress: plain progress lines on stderr when it is not a terminal
  /// (a terminal always gets the redrawn line unless -q); every
  /// progress_interval seconds (--progress-interval; 0: every update).
  bool progress = false;
  double progress_interval = 1.0;
  u64 cache_bytes = 192ULL << 20;  // --cache-size: default + 64 MiB fits a 256 MiB memory cgroup
  /// The unit options given (--raw, --si, ...; cmd/units.h); nullopt: none,
  /// each text output keeps its default (units_or).
  std::optional<UnitMode> units;
  /// The unit mode for a text output whose default is `def`.
  [[nodiscard]] UnitMode units_or(UnitMode def) const { return units.value_or(def); }
  /// Test and profiling hooks from the environment (main sets it; null: none).
  const EnvHooks* hooks = nullptr;
  /// The command as its JSON header names it ("inspect dump-tree"), and the
  /// devices given to it: main sets both after parsing; the JSON error
  /// document names them.
  std::string command;
  std::vector<std::string> devices;
};

/// Writes warnings as "WARNING: ..." and (unless quiet) notices to stderr.
class StderrReporter final : public Reporter {
 public:
  explicit StderrReporter(const GlobalOptions& g) : g_(g) {}
  void warning(const std::string& m) override { std::cerr << "WARNING: " << m << '\n'; }
  void notice(const std::string& m) override {
    if (!g_.quiet) std::cerr << "NOTE: " << m << '\n';
  }

 private:
  const GlobalOptions& g_;
};

/// The progress display of a long command on stderr (cmd/progress.h) as
/// the global options say (-q, -v, --progress, --progress-interval, the
/// unit options) and `asked` (the command's own -p), labelled `label`;
/// null when there is nothing to show (stderr not a terminal, no
/// --progress, no -v; or -q).
[[nodiscard]] std::unique_ptr<ProgressRenderer> stderr_progress(const GlobalOptions& g, const std::string& label, bool asked = false);
/// The version of the JSON output (fsctl(8) "JSON OUTPUT": within one
/// version members are only added; docs/json/ has the schemas).
inline constexpr const char* JSON_VERSION = "2";

/// The versioned top-level object every JSON report starts from:
/// {"__header": {"version": JSON_VERSION, "command": cmd}}.
[[nodiscard]] nlohmann::ordered_json json_header(const std::string& command);

/// The "error" member of a JSON document (docs/json/error.schema.json):
/// code (the exit code), kind (the Errc name, or `kind` when given: "usage",
/// "internal"), message (as on stderr, without "ERROR: "), and where known
/// device (the first of `devices` the message names), devid, bytenr and
/// errno; null when not known.
[[nodiscard]] nlohmann::ordered_json error_json(const Error& e, const std::vector<std::string>& devices,
                                                std::string_view kind = {});

/// Prints "ERROR: message" to stderr and returns the exit code for it; no
/// JSON (for an error a JSON report carries itself).
int print_error(const Error& e);
/// Prints "ERROR: message" to stderr and, with --format json, the error
/// document {"__header": ..., "error": error_json(e)} on stdout; returns the
/// exit code for it. Every failing command ends here or in usage_error.
int report_error(const GlobalOptions& g, const Error& e);
/// Same, naming `device` first unless the message already does.
int report_error(const GlobalOptions& g, const Error& e, const std::string& device);
/// A bad command line found by the command itself: as report_error, kind
/// "usage", exit code EXIT_USAGE.
int usage_error(const GlobalOptions& g, const std::string& message);
/// The error document of a failure outside any command's run (the command
/// line did not parse, an exception reached main): `command` as far as it
/// is known, kind "usage", "internal" or "out_of_memory".
void print_error_document(const std::string& command, int code, std::string_view kind, const std::string& message);
/// Whether the arguments (argv[1..]) ask for --format json, read before
/// they are parsed (for the error document of a command line that does not
/// parse).
[[nodiscard]] bool json_format_requested(const std::vector<std::string>& args);

/// Parses a size like "256M", "1G", "4096" into bytes. nullopt when invalid.
[[nodiscard]] std::optional<u64> parse_size(const std::string& s);

}  // namespace fsctl::cmd
