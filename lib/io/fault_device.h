// SPDX-License-Identifier: GPL-2.0-only
// FaultDevice: a decorator for crash tests. After the N-th write request
// across all devices of the process it ends the process at once (as a power
// cut would), leaving exactly the first N writes on disk (DESIGN.md "Testing").
#pragma once
#include <memory>
#include <optional>

#include "lib/io/block_device.h"

namespace fsctl::io {

/// Environment variable naming N; test-only. Unset or 0: no fault.
inline constexpr const char* FAIL_AFTER_WRITES_ENV = "FSCTL_FAIL_AFTER_WRITES";
/// Exit status of a process stopped by the fail point.
inline constexpr int FAIL_POINT_EXIT = 86;

/// N from the environment, if set to a positive number.
[[nodiscard]] std::optional<u64> fail_after_writes_from_env();

/// Wraps `inner`; every write_at counts against a process-wide budget of `n`
/// writes. The write that reaches n is performed, then the process calls
/// _exit(FAIL_POINT_EXIT) without flushing anything else.
[[nodiscard]] std::unique_ptr<BlockDevice> make_fault_device(std::unique_ptr<BlockDevice> inner, u64 n);

/// Writes counted so far by fault devices (for reports and tests).
[[nodiscard]] u64 fault_device_writes();

}  // namespace fsctl::io
