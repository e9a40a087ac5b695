// SPDX-License-Identifier: GPL-2.0-only
// The process-wide discarding Reporter.
#include "lib/base/reporter.h"

namespace fsctl {
Reporter& null_reporter() {
  static Reporter r;
  return r;
}
}  // namespace fsctl
