// SPDX-License-Identifier: GPL-2.0-only
// The progress display of the long commands (issue 13; fsctl(8) "PROGRESS"):
// renders what a job reports through lib/base/progress.h on stderr. On a
// terminal one line redrawn in place (at most ten times a second) with the
// percentage, counts, bytes, rate and ETA; with --progress and stderr not a
// terminal (systemd, cron) a plain line every --progress-interval seconds,
// without carriage returns; with -v a line per committed step. JSON output
// (stdout) never sees any of it. The clock is injected so the rate and ETA
// are testable (tests/unit/cmd/progress_test.cpp).
#pragma once
#include <functional>
#include <string>

#include "cmd/units.h"
#include "lib/base/progress.h"

namespace fsctl::cmd {

/// Seconds on a monotonic clock (any origin).
using SecondsClock = std::function<double()>;
/// std::chrono::steady_clock in seconds.
[[nodiscard]] SecondsClock steady_seconds();

/// How progress is shown: not at all, a line redrawn in place, plain lines.
enum class ProgressMode { off, tty, lines };

/// The mode for stderr: off when `quiet`; a redrawn line when stderr is a
/// terminal (`stderr_tty`); plain lines when `asked` (--progress, -p)
/// and stderr is not a terminal; otherwise off.
[[nodiscard]] ProgressMode progress_mode(bool quiet, bool asked, bool stderr_tty);

/// "14500" -> "14,500".
[[nodiscard]] std::string format_count(u64 n);
/// A duration for an ETA, rounded up to whole seconds: "0s", "3s", "59s",
/// "1m05s", "59m59s", "1h00m" (minutes rounded up past an hour), "26h40m".
/// Negative or not finite: "?".
[[nodiscard]] std::string format_duration(double seconds);
/// Units per second: "3,100/s" from 10 up (rounded), "2.5/s" below.
/// Negative or not finite: "?/s".
[[nodiscard]] std::string format_rate(double per_second);

struct ProgressConfig {
  ProgressMode mode = ProgressMode::off;
  bool verbose = false;       // a line per committed step (-v), in every mode
  double interval = 1.0;      // lines mode: seconds between lines (0: a line per update)
  double tty_interval = 0.1;  // tty mode: seconds between redraws at least
  UnitMode units = UNITS_HUMAN;  // for the bytes
  std::string label;          // the command, first on each line: "convert", "balance"
  /// Called after each update is handled (drawn or not): the test hook
  /// FSCTL_PROGRESS_HOLD (cmd/env_hooks.h). Empty: none.
  std::function<void()> after_update;
};

/// One progress line (without "\r" or "\n"): "LABEL: P% D/T UNIT, B/BT, R/s,
/// ETA E", e.g. "balance: 37% 5,400/14,500 tree blocks, 21.09MiB/56.64MiB,
/// 3,100/s, ETA 3s". The unit with a total is shown (tree blocks before
/// block groups); without one, the count alone ("qgroup verify: 12,000
/// tree blocks, 46.88MiB, 30,000/s"). `percent` is the one to show (the
/// renderer keeps it from going back); `rate` in units per second (< 0:
/// unknown, left out); `eta` in seconds (< 0: left out); `done_in` >= 0:
/// the run is over and took that many seconds (shown instead of the ETA).
struct ProgressLine {
  std::string label;
  ProgressCounts counts;
  u64 percent = 0;
  double rate = -1;
  double eta = -1;
  double done_in = -1;
};
[[nodiscard]] std::string format_progress_line(const ProgressLine& line, UnitMode units);

/// Renders a job's progress (ProgressObserver) on a text sink: stderr in
/// the commands, a string in the tests. Rate and ETA come from the primary
/// unit's done count since the first update and the clock.
class ProgressRenderer final : public ProgressObserver {
 public:
  using Write = std::function<void(const std::string&)>;
  ProgressRenderer(ProgressConfig config, Write write, SecondsClock clock);
  ~ProgressRenderer() override;
  ProgressRenderer(const ProgressRenderer&) = delete;
  ProgressRenderer& operator=(const ProgressRenderer&) = delete;

  void on_progress(const ProgressCounts& counts) override;
  void on_step(const StepRecord& step, const ProgressCounts& counts) override;
  /// The last frame, whatever the interval, then (tty) the end of the line.
  /// Does nothing when no update came or after the first call. Call it
  /// before printing the result or an error.
  void finish();

 private:
  [[nodiscard]] ProgressLine line_now(double now, bool final);
  void draw(double now, bool final);

  ProgressConfig cfg_;
  Write write_;
  SecondsClock clock_;
  ProgressCounts counts_;
  bool started_ = false;
  bool finished_ = false;
  bool drawn_ = false;     // tty: a line is on the screen (no newline after it yet)
  double start_ = 0;       // clock at the first update
  u64 start_done_ = 0;     // primary done at the first update
  double last_draw_ = 0;
  u64 shown_percent_ = 0;  // the highest percentage shown
};

}  // namespace fsctl::cmd
