// SPDX-License-Identifier: GPL-2.0-only
// PhaseTimer: with FSCTL_TIMING set in the environment, prints how long each
// phase of an operation took (seconds, wall clock) and the process's current
// and peak resident set (MiB, /proc/self/status VmRSS and VmHWM) on stderr,
// one "timing: PHASE SECONDS rss R hwm H [DETAIL]" line per mark();
// otherwise does nothing.
// For bench/ profiling; never part of a command's output.
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fsctl {

class PhaseTimer {
 public:
  /// Prints the time since construction or the previous mark() as `phase`.
  void mark(const char* phase, const std::string& detail = {}) {
    if (!on_) return;
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
    std::fprintf(stderr, "timing: %-28s %8.3f s rss %5ld hwm %5ld MiB%s%s\n", phase, std::chrono::duration<double>(now - t_).count(),
                 rss / 1024, hwm / 1024, detail.empty() ? "" : " ", detail.c_str());
    t_ = now;
  }

 private:
  bool on_ = std::getenv("FSCTL_TIMING") != nullptr;
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
};

}  // namespace fsctl
