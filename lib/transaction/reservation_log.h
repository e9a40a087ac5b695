// SPDX-License-Identifier: GPL-2.0-only
// Test hook of the reservation (DESIGN.md invariant 4; issue 4's acceptance
// "for every operation in the tests, used <= reserved always and reserved
// <= 2 x used in the median"): with FSCTL_RESERVATION_LOG=PATH in the
// environment, every committed transaction appends one line
//   LABEL PID RESERVED_BYTES USED_BYTES
// to PATH (one append write per line, so parallel tests can share the file).
// tests/reservation_report.py checks the lines the test suite left.
#pragma once
#include <string>

#include "lib/base/ints.h"

namespace fsctl::transaction {

inline constexpr const char* RESERVATION_LOG_ENV = "FSCTL_RESERVATION_LOG";

/// Names the operation of this process in the log lines (e.g. "convert",
/// "qgroup verify"; spaces become '_'). Default: "unnamed".
void set_reservation_log_label(const std::string& label);

/// Appends a line for a committed transaction when RESERVATION_LOG_ENV is
/// set; `reserved` and `used` in bytes (Transaction::reserved_bytes,
/// TransactionStats::used_bytes). Errors are ignored: the log is a test aid
/// and must never fail a commit.
void log_reservation(u64 reserved, u64 used);

}  // namespace fsctl::transaction
