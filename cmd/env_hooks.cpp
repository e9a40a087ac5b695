// SPDX-License-Identifier: GPL-2.0-only
// Environment hooks of the front end and the test tools (env_hooks.h): the
// reservation log writer, the timing printer and the fail point's budget.
#include "cmd/env_hooks.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace fsctl::cmd {

void EnvObserver::on_commit(const fs::CommitRecord& record) {
  if (++commits_ == signal_after_)
    for (int i = 0; i < signal_count_; ++i) std::raise(SIGINT);
  if (log_.empty()) return;
  std::string label = record.label.empty() ? "unnamed" : record.label;
  std::replace(label.begin(), label.end(), ' ', '_');
  std::string line = label + ' ' + std::to_string(getpid()) + ' ' + std::to_string(record.reserved_bytes) + ' ' +
                     std::to_string(record.used_bytes) + '\n';
  int fd = ::open(log_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
}

void EnvObserver::on_phase(const PhaseTiming& t) {
  if (!timing_) return;
  std::string phase(t.phase), detail(t.detail);
  std::fprintf(stderr, "timing: %-28s %8.3f s rss %5llu hwm %5llu MiB%s%s\n", phase.c_str(), t.seconds,
               static_cast<unsigned long long>(t.rss_kib / 1024), static_cast<unsigned long long>(t.hwm_kib / 1024),
               detail.empty() ? "" : " ", detail.c_str());
}

EnvHooks EnvHooks::from_environment(std::string label) {
  EnvHooks h;
  h.label_ = std::move(label);
  if (const char* v = std::getenv(FAIL_AFTER_WRITES_ENV); v && *v) {
    char* end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (!*end && n > 0) h.budget_ = std::make_shared<io::FaultBudget>(static_cast<u64>(n));
  }
  const char* log = std::getenv(RESERVATION_LOG_ENV);
  bool timing = std::getenv(TIMING_ENV) != nullptr;
  if (const char* v = std::getenv(HOLD_AFTER_OPEN_ENV); v && *v) h.hold_dir_ = v;
  if (const char* v = std::getenv(PROGRESS_HOLD_ENV); v && *v) h.progress_hold_dir_ = v;
  u64 signal_after = 0;
  int signal_count = 1;
  if (const char* v = std::getenv(SIGNAL_AFTER_COMMITS_ENV); v && *v) {
    char* end = nullptr;
    signal_after = std::strtoull(v, &end, 10);
    if (*end == 'x') signal_count = static_cast<int>(std::strtol(end + 1, &end, 10));
    if (*end || signal_count < 1 || signal_count > 2) signal_after = 0;
  }
  if ((log && *log) || timing || signal_after)
    h.observer_ = std::make_shared<EnvObserver>(log ? log : "", timing);
  if (signal_after) h.observer_->signal_after_commits(signal_after, signal_count);
  return h;
}

void EnvHooks::hold_after_write_open() const {
  if (hold_dir_.empty()) return;
  std::string opened = hold_dir_ + "/opened";
  int fd = ::open(opened.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) ::close(fd);
  // Opening a FIFO for reading blocks until a writer opens it; then wait
  // for its byte (or its close).
  int go = ::open((hold_dir_ + "/go").c_str(), O_RDONLY | O_CLOEXEC);
  if (go < 0) return;
  char c = 0;
  ssize_t n = ::read(go, &c, 1);
  (void)n;
  ::close(go);
}

std::function<void()> EnvHooks::progress_hold() const {
  if (progress_hold_dir_.empty()) return {};
  return [dir = progress_hold_dir_] {
    // Opening a FIFO blocks until the other end opens it: the writer here
    // until the test reads the announcement, the reader until it says go.
    int fd = ::open((dir + "/update").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = ::write(fd, "update\n", 7);
    ::close(fd);
    int go = ::open((dir + "/go").c_str(), O_RDONLY | O_CLOEXEC);
    if (go < 0) return;
    char c = 0;
    n = ::read(go, &c, 1);
    (void)n;
    ::close(go);
  };
}

void EnvHooks::apply(fs::OpenOptions& o) const {
  o.label = label_;
  o.observer = observer_.get();
  if (o.write && budget_) o.wrap_device = io::compose_wrappers(std::move(o.wrap_device), io::fault_wrapper(budget_));
}

}  // namespace fsctl::cmd
