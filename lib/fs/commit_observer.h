// SPDX-License-Identifier: GPL-2.0-only
// CommitObserver: the test and profiling seam of an opened filesystem
// (LevelDB's Env idea, STYLE.md "Models to copy"): fs::OpenOptions carries
// one, FsInfo keeps it, and the write side tells it about every committed
// transaction (DESIGN.md invariants 3 and 4) and, when it asks for them,
// about phase timings (lib/base/phase_timer.h). The library never reads the
// environment: cmd/ installs an observer that writes FSCTL_RESERVATION_LOG
// and FSCTL_TIMING lines; tests install one that records commits.
#pragma once
#include <string>

#include "lib/base/ints.h"
#include "lib/base/phase_timer.h"

namespace fsctl::fs {

/// One committed transaction: its superblock reached every device.
struct CommitRecord {
  u64 transid = 0;          // the new superblock generation
  u64 reserved_bytes = 0;   // metadata bytes the transaction reserved (Transaction::reserved_bytes)
  u64 used_bytes = 0;       // metadata bytes it newly allocated (TransactionStats::used_bytes)
  u64 blocks_written = 0;   // tree block writes, early writeback included (TransactionStats::blocks_written)
  std::string label = {};   // the operation, OpenOptions::label (filled by FsInfo::notify_commit)
};

/// Receives commit records and, if wants_phase_timings(), phase timings.
/// Every method has an empty default; an observer must not fail and must not
/// touch the filesystem it observes (it is called from inside a commit, after
/// the superblocks were written and before Transaction::commit returns).
class CommitObserver : public PhaseSink {
 public:
  /// Called once per committed transaction, never for a rehearsal, an
  /// aborted transaction or a commit whose writes failed.
  virtual void on_commit(const CommitRecord& record) { (void)record; }
  /// Called on the filesystem's thread right before it waits for a running
  /// early writeback (FsInfo::start_write_tree_blocks): `bytenr` is the
  /// tree block that must be on the disk first (to read or change it), 0
  /// for a wait before the next write or flush.
  virtual void on_writeback_wait(u64 bytenr) { (void)bytenr; }
  /// Whether PhaseTimers of this filesystem should measure (reading the
  /// clock and /proc costs a little; off by default).
  [[nodiscard]] virtual bool wants_phase_timings() const { return false; }
  void on_phase(const PhaseTiming& timing) override { (void)timing; }
};

/// An observer that ignores everything; used where the caller gave none.
CommitObserver& null_commit_observer();

}  // namespace fsctl::fs
