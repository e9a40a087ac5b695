// SPDX-License-Identifier: GPL-2.0-only
#include "lib/transaction/reservation_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace fsctl::transaction {
namespace {
std::string& label() {
  static std::string l = "unnamed";
  return l;
}
}  // namespace

void set_reservation_log_label(const std::string& name) {
  std::string l = name.empty() ? "unnamed" : name;
  std::replace(l.begin(), l.end(), ' ', '_');
  label() = l;
}

void log_reservation(u64 reserved, u64 used) {
  const char* path = std::getenv(RESERVATION_LOG_ENV);
  if (!path || !*path) return;
  std::string line = label() + ' ' + std::to_string(getpid()) + ' ' + std::to_string(reserved) + ' ' + std::to_string(used) + '\n';
  int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
}

}  // namespace fsctl::transaction
