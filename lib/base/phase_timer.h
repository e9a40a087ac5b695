// SPDX-License-Identifier: GPL-2.0-only
// PhaseTimer: with FSCTL_TIMING set in the environment, prints how long each
// phase of an operation took (seconds, wall clock) on stderr, one
// "timing: PHASE SECONDS [DETAIL]" line per mark(); otherwise does nothing.
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
    std::fprintf(stderr, "timing: %-28s %8.3f s%s%s\n", phase, std::chrono::duration<double>(now - t_).count(),
                 detail.empty() ? "" : " ", detail.c_str());
    t_ = now;
  }

 private:
  bool on_ = std::getenv("FSCTL_TIMING") != nullptr;
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
};

}  // namespace fsctl
