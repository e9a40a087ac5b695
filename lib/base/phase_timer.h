// SPDX-License-Identifier: GPL-2.0-only
// PhaseTimer: measures how long each phase of an operation took (seconds,
// wall clock) and the process's current and peak resident set
// (/proc/self/status VmRSS and VmHWM) and hands each measurement to a
// PhaseSink the caller gives (cmd/ prints them when FSCTL_TIMING is set);
// without a sink it does nothing, not even read the clock. For bench/
// profiling; never part of a command's output. The library never reads the
// environment (STYLE.md "Models to copy": options carry the observer).
#pragma once
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

#include "lib/base/ints.h"

namespace fsctl {

/// One measured phase.
struct PhaseTiming {
  std::string_view phase;   // what ran, e.g. "write tree blocks"
  double seconds = 0;       // wall clock since the previous mark (or construction)
  u64 rss_kib = 0;          // resident set now, KiB (0 when /proc is unreadable)
  u64 hwm_kib = 0;          // peak resident set, KiB
  std::string_view detail;  // optional, e.g. "(120 blocks, 3 requests)"
};

/// Receives phase timings. Implemented by the front end (fs::CommitObserver
/// derives from it); called on the thread that calls PhaseTimer::mark.
class PhaseSink {
 public:
  virtual ~PhaseSink() = default;
  virtual void on_phase(const PhaseTiming& timing) = 0;
};

class PhaseTimer {
 public:
  /// A timer that measures nothing (no sink).
  PhaseTimer() = default;
  /// Measures for `sink`; null: measures nothing. REQUIRES: `sink` outlives
  /// the timer.
  explicit PhaseTimer(PhaseSink* sink) : sink_(sink) {
    if (sink_) t_ = std::chrono::steady_clock::now();
  }

  /// Hands the time since construction or the previous mark() to the sink
  /// as `phase`, with the resident set sizes.
  void mark(const char* phase, const std::string& detail = {}) {
    if (!sink_) return;
    auto now = std::chrono::steady_clock::now();
    long rss = 0, hwm = 0;  // KiB
    if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
      char line[256];
      while (std::fgets(line, sizeof line, f)) {
        std::sscanf(line, "VmRSS: %ld", &rss);
        std::sscanf(line, "VmHWM: %ld", &hwm);
      }
      std::fclose(f);
    }
    sink_->on_phase(PhaseTiming{phase, std::chrono::duration<double>(now - t_).count(), static_cast<u64>(rss),
                                static_cast<u64>(hwm), detail});
    t_ = now;
  }

 private:
  PhaseSink* sink_ = nullptr;
  std::chrono::steady_clock::time_point t_{};
};

}  // namespace fsctl
