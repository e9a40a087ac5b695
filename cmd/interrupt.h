// SPDX-License-Identifier: GPL-2.0-only
// Signal handling of the write commands (issue 13, man fsctl(8)
// "INTERRUPTION"): while an InterruptScope lives, SIGINT, SIGTERM and SIGHUP
// raise the process's StopRequest instead of killing it. The first signal
// asks the job to stop after the commit in progress (a note on stderr), the
// second to stop at the next safe point inside it (the transaction in
// progress aborts: nothing of it is written); a third one kills the process
// as the default action would (the filesystem is crash-consistent at every
// write, DESIGN.md invariant 3). The command then prints what was done and
// the state left, and exits EXIT_INTERRUPTED.
#pragma once
#include <csignal>

#include "lib/base/stop_request.h"

namespace fsctl::cmd {

/// The one StopRequest of the process, raised by the handlers.
[[nodiscard]] StopRequest& process_stop_request();

/// Installs the handlers for its lifetime and restores the previous ones
/// after. Not nestable.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  /// The request the job polls.
  [[nodiscard]] const StopRequest* stop() const { return &process_stop_request(); }
  /// The name of the first signal received ("SIGINT"...), or "stop" when
  /// none was (the request was raised otherwise).
  [[nodiscard]] static const char* signal_name();

 private:
  struct sigaction old_[3] {};
};

}  // namespace fsctl::cmd
