// SPDX-License-Identifier: GPL-2.0-only
// The batch runner: one loop for every write job (convert, balance, qgroup
// repair). A job describes its steps (BatchJob); the runner starts each
// step's transaction, reserves (DESIGN.md invariant 4), applies the step,
// commits, halves the batch on ENOSPC before a commit, sums the statistics,
// reports progress and stops between steps when asked.
//
// Reservation, one mechanism: a small job (its estimate at most
// REHEARSAL_MAX_BLOCKS blocks per step) is first run whole on a rehearsal
// copy of the filesystem (FsInfo::rehearsal_copy: in-memory overlays of the
// devices), committing batch after batch as the real run will, halving a
// batch whose blocks do not fit; the real run then takes the same steps and
// reserves what each allocated there, plus a margin. The engine is
// deterministic, so the real run allocates what the rehearsal did; and a
// run whose rehearsal did not complete never writes (an error a later batch
// would meet is found before the first commit, and a run that would stop
// half-way for lack of space is refused). A larger job, or one whose
// rehearsal outgrows its memory, reserves each step from its bound
// (BatchJob::reserve_bound: the shapes of the trees or a shadow replay).
// Each step is computed at most twice: rehearsal and real run.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lib/base/progress.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {

/// A write job, described step by step. A step is one transaction; its
/// size in units (block groups) is what the runner halves.
class BatchJob {
 public:
  virtual ~BatchJob() = default;
  /// Whether every step is done.
  [[nodiscard]] virtual bool done() const = 0;
  /// Units the next step takes when batches are `batch` units; 0 for a
  /// step that is not made of units (it is never halved).
  [[nodiscard]] virtual u64 next_units(u64 batch) const = 0;
  /// Whether a step may run while CHANGING_BG_TREE is set (Transaction::start).
  [[nodiscard]] virtual bool allow_changing_bg_tree() const { return false; }
  /// Whether a step that does not fit may be retried with half the units.
  [[nodiscard]] virtual bool may_halve() const { return true; }
  /// An estimate of the blocks the biggest step allocates, cheap, for the
  /// choice between rehearsal and bound; nullopt: always the bound.
  [[nodiscard]] virtual std::optional<u64> estimate_blocks(u64 batch) const = 0;
  /// Before the first commit of a run reserved from bounds (and for its dry
  /// run): what must hold for the whole run, checked on `t` (a transaction
  /// that commits nothing): the first batch's reservation with the growth
  /// of later ones, blocks the run will copy being copyable. Returns the
  /// batch to use (`batch` or less, halved until the reservation fits) and
  /// the bytes it reserved. Errors: Errc::nospc even at one unit; the
  /// job's refusals. Default: nothing to check.
  struct Preflight {
    u64 batch = 0;
    u64 reserved_bytes = 0;
  };
  [[nodiscard]] virtual Result<Preflight> preflight(Transaction& t, u64 batch) {
    (void)t;
    return Preflight{batch, 0};
  }
  /// A step of a run reserved from bounds whose reservation does not fit
  /// even at its smallest (`e` is Errc::nospc; nothing of it changed):
  /// whether the job gives the step up, or part of it, and goes on — it
  /// records what it gave up and moves to its next step; the runner aborts
  /// the step's transaction and starts the next. Default: no, the run stops
  /// with the error (kernel balance too goes on past a chunk it cannot
  /// relocate: __btrfs_balance counts enospc_errors).
  [[nodiscard]] virtual bool skip_step(const Error& e) {
    (void)e;
    return false;
  }
  /// Sets up a fresh transaction of the next step before any change
  /// (exclusions, chunk profile).
  virtual void prepare(Transaction& t) { (void)t; }
  /// Reserves an upper bound of what the next step of `units` units
  /// allocates (Transaction::reserve / reserve_planned) on `t`, before any
  /// change; returns the reserved bytes. Errors: Errc::nospc, read errors.
  [[nodiscard]] virtual Result<u64> reserve_bound(Transaction& t, u64 units) = 0;
  /// Makes the next step's changes (`units` units) in `t`.
  [[nodiscard]] virtual Status apply(Transaction& t, u64 units) = 0;
  /// The superblock changes of the next step's commit.
  [[nodiscard]] virtual SuperChanges super_changes(u64 units) const { (void)units; return {}; }
  /// The next step (`units` units) committed: the job moves on.
  [[nodiscard]] virtual Status committed(u64 units) = 0;
  /// Where the job stands, for messages after a commit ("35 of 106 block
  /// groups moved; the conversion is resumable").
  [[nodiscard]] virtual std::string progress_note() const = 0;
  /// Where the job stands in counts (tree blocks, block groups, bytes; see
  /// ProgressCounts), whole-job totals (a resumed job counts what earlier
  /// runs did). Default: nothing counted.
  [[nodiscard]] virtual ProgressCounts progress_counts() const { return {}; }
};

/// A job of one step (run_one_commit): done once its one commit is made.
/// The job gives apply, reserve_bound and estimate_blocks; `before` and
/// `after` are its progress notes for either side of the commit.
class OneStepJob : public BatchJob {
 public:
  OneStepJob(std::string before, std::string after) : before_(std::move(before)), after_(std::move(after)) {}
  [[nodiscard]] bool done() const override { return done_; }
  [[nodiscard]] u64 next_units(u64) const override { return 0; }
  [[nodiscard]] Status committed(u64) override {
    done_ = true;
    return {};
  }
  [[nodiscard]] std::string progress_note() const override { return done_ ? after_ : before_; }

 private:
  std::string before_, after_;
  bool done_ = false;
};

/// Makes the job anew for a rehearsal copy of the filesystem, in the state
/// the real job started from.
using JobFactory = std::function<Result<std::unique_ptr<BatchJob>>(fs::FsInfo&)>;

struct RunnerOptions {
  u64 batch = 1;          // units per step at most
  bool dry_run = false;   // rehearse or reserve the first step, commit nothing
  bool rehearse = true;   // may rehearse a small job on a copy first
  /// Memory the rehearsal's writes may take (overlay pages), bytes.
  u64 rehearsal_memory = 48ULL << 20;
  /// A request to stop (signal handlers raise it): at level 1 the run stops
  /// after the step in progress commits; at level 2 the step in progress is
  /// abandoned at its next block allocation (nothing of it written). Either
  /// way run_batches returns with RunStats::interrupted, the filesystem at
  /// its last commit. Checked between the rehearsal's steps too (nothing is
  /// written then).
  const StopRequest* stop = nullptr;
  /// Told where the real run stands: on_progress when its first step
  /// starts and after each commit, on_step after each commit (the job's
  /// progress_counts). The rehearsal reports nothing. Null: nobody.
  ProgressObserver* progress = nullptr;
};

/// What a run did.
struct RunStats {
  u64 commits = 0;
  u64 tree_blocks_written = 0;
  u64 tree_blocks_written_early = 0;  // of tree_blocks_written: by bounded writeback before a commit
  u64 reserved_bytes = 0;  // sum over commits (dry run: the largest step's reservation)
  u64 used_bytes = 0;      // metadata bytes allocated, sum over commits
  u64 batch = 0;           // units per step the run ended with (halved while steps did not fit)
  bool rehearsed = false;  // reserved from a rehearsal (else from bounds)
  bool interrupted = false;  // stopped early by RunnerOptions::stop (the filesystem at its last commit)
  /// Chunks the committed steps created (by the allocator, or the job's
  /// convert= profile), in order: logical start, length, type|profile flags.
  struct ChunkCreated {
    u64 logical = 0, length = 0, flags = 0;
  };
  std::vector<ChunkCreated> chunks_created;
};

/// What a job of one step (one commit: quota disable and enable, balance
/// cancel) did.
struct OneCommit {
  bool wrote = false;        // the transaction committed
  u64 transid = 0;           // its transid (when wrote)
  u64 reserved_bytes = 0;    // reserved before the first write (a dry run: what it would reserve)
  u64 used_bytes = 0;        // metadata bytes allocated
  u64 blocks_written = 0;    // tree block writes
  bool rehearsed = false;    // reserved from a rehearsal
  bool interrupted = false;  // stopped before the commit: nothing written
};

/// Steps with fewer estimated blocks than this are rehearsed (BatchJob::estimate_blocks).
inline constexpr u64 REHEARSAL_MAX_BLOCKS = 1024;

/// Runs `job` on `fs` to the end (see above); `rehearsal` makes the same job
/// for a rehearsal copy. REQUIRES: `fs` opened for writing (a dry run too:
/// its rehearsal copy writes), `job` made for `fs` and not started.
/// Errors, nothing written: those of the rehearsal (any error a step met,
/// Errc::nospc when a step of one unit does not fit) and of the first
/// step's reservation. Errors after a commit leave the committed steps on
/// disk; the message says how far the job got (progress_note).
[[nodiscard]] Result<RunStats> run_batches(fs::FsInfo& fs, BatchJob& job, const JobFactory& rehearsal, const RunnerOptions& opts);

/// Runs the one-step job `make` builds (for `fs` and for its rehearsal copy)
/// with the runner: rehearsed whole first, then committed unless `dry_run`;
/// `stop` may interrupt it before the commit. Errors: those of run_batches.
[[nodiscard]] Result<OneCommit> run_one_commit(fs::FsInfo& fs, const JobFactory& make, bool dry_run, const StopRequest* stop);

}  // namespace fsctl::transaction
