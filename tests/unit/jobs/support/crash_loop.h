// SPDX-License-Identifier: GPL-2.0-only
// The in-memory crash loop (DESIGN.md invariant 3, "Testing"; LevelDB's
// FaultInjectionTestEnv): run a job once uninterrupted, recording the state
// after each commit, then for every N from 1 to the run's write requests
// run it again over a fault device that stops after write N, reopen the
// surviving bytes, check them, rerun the job and compare its result with the
// uninterrupted run's. No process, no loop device, no root.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "lib/io/memory_device.h"
#include "tests/unit/jobs/support/jobs.h"
#include "tests/unit/jobs/support/tree_dump.h"

namespace fsctl::testing {

struct CrashOptions {
  /// How the rerun's result is compared with the uninterrupted run's
  /// (tree_dump.h); crash states are always compared exactly.
  DumpMode result_mode = DumpMode::exact;
  /// Whether qgroups must verify in every crash state (a balance never
  /// changes them); after every rerun they must whenever quota is on.
  bool qgroups_exact_when_crashed = false;
  /// Tree block cache of the job's opens (`--cache-size`): a small one makes
  /// bounded writeback write blocks before each commit (DESIGN.md invariant
  /// 5), more crash points that must leave the last commit intact.
  u64 cache_bytes = 64ULL << 20;
  /// Stop collecting failure lines after this many (the loop goes on).
  std::size_t max_failures = 12;
};

struct CrashReport {
  u64 writes = 0;       // write requests of the uninterrupted run: the crash points
  u64 commits = 0;      // its commits
  u64 old_states = 0;   // crash points that reopened at the last completed commit (or the start)
  u64 new_states = 0;   // ... at the commit in flight (its primary superblock had landed)
  std::vector<std::string> failures;  // "N=7: ..." one per failed check
  double seconds = 0;   // the whole loop, reference run included
};

/// An image's dumps after its check (open_and_check).
struct Checked {
  TreeDump exact;   // always
  TreeDump result;  // in the asked mode
};

/// Opens `image` read-only and checks it: every tree walked and verified,
/// no fsck error, qgroups exact when asked; returns its dumps. Errors:
/// Errc::corrupt naming the first problem, or the open's.
[[nodiscard]] Result<Checked> open_and_check(const std::shared_ptr<io::MemoryImage>& image, DumpMode mode,
                                             bool qgroups_exact);
/// Opens `image` for writing through `wrap` and `observer` and runs `job`.
[[nodiscard]] Status run_job(const std::shared_ptr<io::MemoryImage>& image, const Job& job, io::DeviceWrapper wrap,
                             fs::CommitObserver* observer, u64 cache_bytes);
/// True when the filesystem on `image` has a quota tree.
[[nodiscard]] bool has_quota(const std::shared_ptr<io::MemoryImage>& image);

/// Runs the loop over a copy of `base` (never written). A crash point fails
/// when: the job succeeds although the device stopped, or stops with another
/// error than the fail point's; the filesystem does not open read-only from
/// the surviving bytes; its generation is not the last completed commit's
/// or the one in flight's; check::check_filesystem (every tree walked, every
/// block verified, extent and free space trees cross-checked) reports an
/// error; its dump differs from the uninterrupted run's state at that
/// generation; the rerun fails; or the rerun's result differs from the
/// uninterrupted run's (in `o.result_mode`). Failures of the uninterrupted
/// run itself are reported as N=0.
[[nodiscard]] CrashReport crash_at_every_write(const std::shared_ptr<const io::MemoryImage>& base, const Job& job,
                                               const CrashOptions& o);

}  // namespace fsctl::testing
