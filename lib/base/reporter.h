// SPDX-License-Identifier: GPL-2.0-only
// Reporter: the sink through which the library hands warnings and notices to
// the front end. The library never prints (STYLE.md "I/O and logic").
#pragma once
#include <string>

namespace fsctl {

/// Receives warnings (a damaged mirror, a fallback) and notices. The default
/// implementation drops everything; cmd/ installs one that writes to stderr.
class Reporter {
 public:
  virtual ~Reporter() = default;
  /// A condition the user should know about; the operation goes on.
  virtual void warning(const std::string& message) { (void)message; }
  /// Informational one-liner (e.g. "O_DIRECT refused, using buffered I/O").
  virtual void notice(const std::string& message) { (void)message; }
};

/// A Reporter that discards everything; used where the caller gave none.
Reporter& null_reporter();

}  // namespace fsctl
