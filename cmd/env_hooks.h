// SPDX-License-Identifier: GPL-2.0-only
// The test and profiling hooks a process takes from its environment: the
// only place that reads it (the library takes them as fs::OpenOptions; the
// test tools in tests/tools/ use this file too, so the image tests drive
// them the same way).
//   FSCTL_FAIL_AFTER_WRITES=N  crash tests (DESIGN.md invariant 3): the
//       devices of a write open share one io::FaultBudget of N write requests;
//       the command fails at the first dropped write and the process exits
//       FAIL_POINT_EXIT having written exactly the first N requests.
//   FSCTL_RESERVATION_LOG=PATH  every committed transaction appends
//       "LABEL PID RESERVED_BYTES USED_BYTES" to PATH (one append write per
//       line, so parallel tests share the file; tests/reservation_report.py
//       checks them: DESIGN.md invariant 4).
//   FSCTL_TIMING  phase timings on stderr, "timing: PHASE SECONDS s rss R hwm H MiB [DETAIL]".
//   FSCTL_HOLD_AFTER_OPEN=DIR  concurrency tests: right after a write open
//       (devices locked, nothing written) the process creates DIR/opened and
//       waits until something is written to the FIFO DIR/go, so a test runs
//       a second command at that exact moment without sleeping.
//   FSCTL_SIGNAL_AFTER_COMMITS=N[xK]  interruption tests: right after the
//       N-th commit of the process the observer raises SIGINT K times (1 or
//       2, default 1), as an operator pressing Ctrl-C at that moment would.
//   FSCTL_PROGRESS_HOLD=DIR  progress display tests: after each progress
//       update the renderer has handled (cmd/progress.h), the process writes
//       "update\n" to the FIFO DIR/update and waits for a byte on the FIFO
//       DIR/go, so a test reads the screen at each update, without sleeping;
//       every update is then drawn (no redraw throttle on a terminal).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "lib/fs/fs_info.h"
#include "lib/io/fault_device.h"

namespace fsctl::cmd {

inline constexpr const char* FAIL_AFTER_WRITES_ENV = "FSCTL_FAIL_AFTER_WRITES";
inline constexpr const char* RESERVATION_LOG_ENV = "FSCTL_RESERVATION_LOG";
inline constexpr const char* TIMING_ENV = "FSCTL_TIMING";
inline constexpr const char* HOLD_AFTER_OPEN_ENV = "FSCTL_HOLD_AFTER_OPEN";
inline constexpr const char* SIGNAL_AFTER_COMMITS_ENV = "FSCTL_SIGNAL_AFTER_COMMITS";
inline constexpr const char* PROGRESS_HOLD_ENV = "FSCTL_PROGRESS_HOLD";
/// Exit status of a process whose fail point was reached.
inline constexpr int FAIL_POINT_EXIT = 86;

/// The observer cmd/ installs: reservation log lines and timing lines.
class EnvObserver final : public fs::CommitObserver {
 public:
  /// `reservation_log`: file to append to (empty: none); `timing`: print
  /// phase timings on stderr.
  EnvObserver(std::string reservation_log, bool timing) : log_(std::move(reservation_log)), timing_(timing) {}
  /// Raise SIGINT `count` times right after commit number `after` (1-based).
  void signal_after_commits(u64 after, int count) {
    signal_after_ = after;
    signal_count_ = count;
  }
  /// Appends "LABEL PID RESERVED USED" (spaces of the label become '_').
  /// Errors are ignored: the log is a test aid and must never fail a commit.
  /// Then raises the signals asked for by signal_after_commits.
  void on_commit(const fs::CommitRecord& record) override;
  [[nodiscard]] bool wants_phase_timings() const override { return timing_; }
  void on_phase(const PhaseTiming& timing) override;

 private:
  std::string log_;
  bool timing_ = false;
  u64 commits_ = 0;
  u64 signal_after_ = 0;
  int signal_count_ = 0;
};

/// The hooks of one process, read from the environment once.
class EnvHooks {
 public:
  /// Reads the variables. `label` names the operation in the
  /// reservation log (e.g. "convert", "qgroup verify", "tree_torture").
  /// A FSCTL_FAIL_AFTER_WRITES that is not a positive number is ignored.
  [[nodiscard]] static EnvHooks from_environment(std::string label);

  /// Fills the observer, the label and, for a write open, the fault
  /// wrapper (every write open of the process shares the one budget, as
  /// the fail point counted every write request of the process before).
  void apply(fs::OpenOptions& o) const;
  /// FSCTL_HOLD_AFTER_OPEN: announce the write open and wait for the go
  /// (no-op without the variable; errors of the files are ignored).
  void hold_after_write_open() const;
  /// FSCTL_PROGRESS_HOLD: the hook the progress renderer calls after each
  /// update (announce on DIR/update, wait for DIR/go); empty without the
  /// variable. Errors of the FIFOs are ignored (the hook then returns).
  [[nodiscard]] std::function<void()> progress_hold() const;
  /// True once the fail point was reached: the caller exits FAIL_POINT_EXIT.
  [[nodiscard]] bool fail_point_reached() const { return budget_ && budget_->tripped(); }
  /// Write requests performed through fault devices so far (0 without
  /// FSCTL_FAIL_AFTER_WRITES; tools print it so tests learn a run's count).
  [[nodiscard]] u64 writes() const { return budget_ ? budget_->writes() : 0; }

 private:
  std::string label_;
  std::string hold_dir_;
  std::string progress_hold_dir_;
  std::shared_ptr<io::FaultBudget> budget_;
  std::shared_ptr<EnvObserver> observer_;
};

}  // namespace fsctl::cmd
