// SPDX-License-Identifier: GPL-2.0-only
// Signal handlers of the write commands (interrupt.h). The handler does
// only async-signal-safe work: an atomic increment and write(2).
#include "cmd/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <cstring>

namespace fsctl::cmd {

namespace {

constexpr int SIGNALS[3] = {SIGINT, SIGTERM, SIGHUP};
std::atomic<int> g_first_signal{0};

void say(const char* s) {
  ssize_t n = ::write(2, s, std::strlen(s));
  (void)n;
}

extern "C" void on_stop_signal(int sig) {
  StopRequest& stop = process_stop_request();
  int level = stop.level.load(std::memory_order_relaxed);
  if (level == 0) {
    g_first_signal.store(sig, std::memory_order_relaxed);
    stop.level.store(1, std::memory_order_relaxed);
    say("\nfsctl: stopping after the commit in progress (signal again to stop sooner)\n");
  } else if (level == 1) {
    stop.level.store(2, std::memory_order_relaxed);
    say("\nfsctl: stopping at the next safe point; the transaction in progress is abandoned\n");
  } else {
    // Third signal: the default action. Every write leaves a filesystem
    // that mounts at its last commit (DESIGN.md invariant 3).
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
}

}  // namespace

StopRequest& process_stop_request() {
  static StopRequest stop;
  return stop;
}

InterruptScope::InterruptScope() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int i = 0; i < 3; ++i) ::sigaction(SIGNALS[i], &sa, &old_[i]);
}

InterruptScope::~InterruptScope() {
  for (int i = 0; i < 3; ++i) ::sigaction(SIGNALS[i], &old_[i], nullptr);
}

const char* InterruptScope::signal_name() {
  switch (g_first_signal.load(std::memory_order_relaxed)) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "stop";
  }
}

}  // namespace fsctl::cmd
