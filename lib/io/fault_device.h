// SPDX-License-Identifier: GPL-2.0-only
// FaultDevice: a decorator for crash tests (DESIGN.md invariant 3 and
// "Testing"; LevelDB's FaultInjectionTestEnv). The devices of one filesystem
// share a FaultBudget of N write requests: the first N are performed, then
// the budget trips, as a power cut right after the N-th write would: every
// later write is dropped and every flush fails, with Errc::io naming the
// fail point. Nothing ends the process: the caller sees the error, and a test
// reopens the surviving bytes in the same process.
#pragma once
#include <atomic>
#include <memory>
#include <string>

#include "lib/io/block_device.h"

namespace fsctl::io {

/// Write budget shared by the fault devices of one filesystem (or of one
/// process: cmd/ uses one for the whole command). Thread-safe: tree blocks
/// are written by several threads at once (FsInfo::write_tree_blocks).
class FaultBudget {
 public:
  /// A budget of `writes_allowed` write requests. REQUIRES: writes_allowed > 0
  /// (a fault before any write is no crash point: nothing reached the disk).
  explicit FaultBudget(u64 writes_allowed);

  /// Takes one write request from the budget: true while fewer than the
  /// allowed number were taken (the request is to be performed), false once
  /// the budget is spent (the request is to be dropped). The N-th request
  /// taken trips the budget.
  [[nodiscard]] bool take_write();
  /// True once N write requests were taken: the fail point was reached.
  /// Every write and flush after it fails.
  [[nodiscard]] bool tripped() const { return taken_.load() >= allowed_; }
  /// Write requests performed (at most N).
  [[nodiscard]] u64 writes() const;
  /// Write requests dropped after the fail point.
  [[nodiscard]] u64 dropped() const;
  /// N, the write requests allowed.
  [[nodiscard]] u64 allowed() const { return allowed_; }
  /// "fail point: ..." naming N, for error messages.
  [[nodiscard]] std::string describe() const;

 private:
  const u64 allowed_;
  std::atomic<u64> taken_{0};
};

/// Wraps `inner`: reads pass through; each write_at takes one request from
/// `budget` and is performed or, past the fail point, dropped with
/// Errc::io (errno EIO) naming the device and the fail point; flush passes
/// through before the fail point and afterwards writes nothing and returns
/// the same error. REQUIRES: `budget` is not null.
[[nodiscard]] std::unique_ptr<BlockDevice> make_fault_device(std::unique_ptr<BlockDevice> inner,
                                                             std::shared_ptr<FaultBudget> budget);

/// A DeviceWrapper (OpenOptions::wrap_device) putting every device of an open
/// behind a fault device sharing `budget`.
[[nodiscard]] DeviceWrapper fault_wrapper(std::shared_ptr<FaultBudget> budget);

}  // namespace fsctl::io
