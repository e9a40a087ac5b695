// SPDX-License-Identifier: GPL-2.0-only
// The batch runner (batch_runner.h): rehearsal on a copy, then the real run
// step by step, each reserved from the rehearsal or from its bound.
#include "lib/transaction/batch_runner.h"

#include <algorithm>

#include "lib/base/phase_timer.h"

namespace fsctl::transaction {

namespace {

/// One step of a rehearsal: its units and the metadata bytes it allocated.
struct Measured {
  u64 units = 0;
  u64 used_bytes = 0;
};

struct Rehearsal {
  std::vector<Measured> steps;
  u64 batch = 0;
};

/// The step a stopped run failed in, in the job's own terms.
Error after_commits(const Error& e, const BatchJob& job, const RunStats& st) {
  if (st.commits == 0) return e;
  return e.context(job.progress_note() + " (" + std::to_string(st.commits) + " commits)");
}

/// Runs the whole job on a rehearsal copy of `fs`, committing on the copy,
/// halving a step whose blocks do not fit. Errors: the first step error
/// that halving cannot cure; Errc::aborted with `*too_big` set when the
/// rehearsal needs more memory than allowed.
Result<Rehearsal> rehearse(fs::FsInfo& fs, const JobFactory& make, const RunnerOptions& o, bool* too_big) {
  // The copy's writeback threshold is the real one's, so that its
  // transactions behave exactly as the real ones will.
  FSCTL_TRY_ASSIGN(fs::RehearsalCopy rc, fs.rehearsal_copy(o.rehearsal_memory));
  fs::FsInfo* copy = rc.fs.get();
  FSCTL_TRY_ASSIGN(auto job, make(*copy));
  Rehearsal r;
  r.batch = std::max<u64>(o.batch, 1);
  while (!job->done()) {
    if (o.stop && o.stop->between_steps()) return make_error(Errc::aborted, "interrupted");
    u64 units = job->next_units(r.batch);
    FSCTL_TRY_ASSIGN(auto t, Transaction::start(*copy, job->allow_changing_bg_tree()));
    t->set_writeback_threshold(fs.cache().budget() / 2);
    t->set_stop_request(o.stop);
    job->prepare(*t);
    Status st = job->apply(*t, units);
    if (st) st = t->commit(job->super_changes(units));
    if (rc.outgrown()) {
      *too_big = true;
      return make_error(Errc::aborted, "the rehearsal needs more than " + std::to_string(o.rehearsal_memory) + " bytes of memory");
    }
    if (!st) {
      if (st.error().code == Errc::nospc && job->may_halve() && units > 1) {
        r.batch = (std::min(r.batch, units) + 1) / 2;
        continue;  // the transaction aborts: the copy is as the last commit left it
      }
      return make_error(st.error());
    }
    r.steps.push_back({units, t->stats().used_bytes});
    FSCTL_TRY(job->committed(units));
  }
  return r;
}

/// Reserves for step `k` of the real run: what the rehearsal measured, or
/// the job's bound, halving the batch while the bound does not fit.
Result<u64> reserve_step(Transaction& t, BatchJob& job, const Rehearsal* rh, std::size_t k, u64& batch, u64& units,
                         bool may_halve) {
  if (rh) {
    units = rh->steps[k].units;
    return t.reserve_measured(rh->steps[k].used_bytes);
  }
  for (;;) {
    units = job.next_units(batch);
    auto got = job.reserve_bound(t, units);
    if (got || got.error().code != Errc::nospc || !may_halve || units <= 1) return got;
    batch = (std::min(batch, units) + 1) / 2;
  }
}

/// Tells `observer` that step `step` of `job` committed in `t`.
void report_step(ProgressObserver& observer, const BatchJob& job, u64 step, const Transaction& t, u64 units) {
  StepRecord rec;
  rec.step = step;
  rec.transid = t.transid();
  rec.units = units;
  rec.tree_blocks_written = t.stats().blocks_written;
  rec.used_bytes = t.stats().used_bytes;
  ProgressCounts counts = job.progress_counts();
  observer.on_step(rec, counts);
  observer.on_progress(counts);
}

/// A dry run from bounds: the reservation of the first step the real run
/// would take — a step the job gives up for lack of space (skip_step) is
/// passed over, as the real run does. `t` is prepared for the job's next
/// step. Returns 0 when the job gave up every step. Errors: as reserve_step.
Result<u64> reserve_first_step(fs::FsInfo& fs, BatchJob& job, std::unique_ptr<Transaction> t, u64& batch) {
  while (!job.done()) {
    u64 units = 0;
    auto r = reserve_step(*t, job, nullptr, 0, batch, units, job.may_halve());
    if (r) return *r;
    if (r.error().code != Errc::nospc || !job.skip_step(r.error())) return make_error(r.error());
    t.reset();
    FSCTL_TRY_ASSIGN(t, Transaction::start(fs, job.allow_changing_bg_tree()));
    job.prepare(*t);
  }
  return 0;
}

}  // namespace

Result<RunStats> run_batches(fs::FsInfo& fs, BatchJob& real_job, const JobFactory& make, const RunnerOptions& o) {
  RunStats st;
  st.batch = std::max<u64>(o.batch, 1);
  BatchJob* job = &real_job;
  if (job->done()) return st;

  std::optional<Rehearsal> rh;
  auto estimate = job->estimate_blocks(st.batch);
  if (o.rehearse && estimate && *estimate <= REHEARSAL_MAX_BLOCKS) {
    bool too_big = false;
    auto r = rehearse(fs, make, o, &too_big);
    if (!r && o.stop && o.stop->between_steps()) {
      st.interrupted = true;  // before any write
      return st;
    }
    if (r) {
      rh = std::move(*r);
      st.rehearsed = true;
      st.batch = rh->batch;
    } else if (!too_big) {
      // What stopped the rehearsal would stop the real run, maybe after
      // its first commit: refuse now, with nothing written.
      if (r.error().code == Errc::nospc)
        return make_error(Errc::nospc, "not enough metadata space: " + r.error().message +
                                           " (a rehearsal of the whole run on an in-memory copy ran out, at the smallest batch; nothing was written)");
      return make_error(r.error());
    }
  }

  if (!rh) {
    // Bound mode: the job's whole-run checks, before the first commit.
    FSCTL_TRY_ASSIGN(auto t, Transaction::start(fs, job->allow_changing_bg_tree()));
    job->prepare(*t);
    FSCTL_TRY_ASSIGN(auto pre, job->preflight(*t, st.batch));
    st.batch = pre.batch;
    if (o.dry_run) {
      st.reserved_bytes = pre.reserved_bytes;
      if (!st.reserved_bytes) {
        FSCTL_TRY_ASSIGN(st.reserved_bytes, reserve_first_step(fs, *job, std::move(t), st.batch));
      }
      return st;
    }
  } else if (o.dry_run) {
    // The reservation of the real run's largest step.
    FSCTL_TRY_ASSIGN(auto t, Transaction::start(fs, job->allow_changing_bg_tree()));
    job->prepare(*t);
    u64 most = 0;
    for (auto& s : rh->steps) most = std::max(most, s.used_bytes);
    FSCTL_TRY_ASSIGN(st.reserved_bytes, t->reserve_measured(most));
    return st;
  }

  // A step abandoned by a stop request "now" aborts with nothing written;
  // the run then reports where it stands instead of an error.
  auto stopped = [&](const Error& e) -> Result<RunStats> {
    if (o.stop && o.stop->now() && e.code == Errc::aborted) {
      st.interrupted = true;
      return st;
    }
    return make_error(after_commits(e, *job, st));
  };
  if (o.progress) o.progress->on_progress(job->progress_counts());
  for (std::size_t k = 0; !job->done(); ++k) {
    if (o.stop && o.stop->between_steps()) {
      st.interrupted = true;
      break;
    }
    if (rh && k >= rh->steps.size())
      return make_error(after_commits(Error{Errc::aborted, 0, "the run has more steps than its rehearsal"}, *job, st));
    PhaseTimer timer(fs.phase_sink());
    auto t = Transaction::start(fs, job->allow_changing_bg_tree());
    if (!t) return make_error(after_commits(t.error(), *job, st));
    (*t)->set_stop_request(o.stop);
    job->prepare(**t);
    u64 units = 0;
    // Halving only before the step's first change: a step whose bound does
    // not fit gets fewer units (nothing written yet).
    auto reserved = reserve_step(**t, *job, rh ? &*rh : nullptr, k, st.batch, units, job->may_halve());
    if (!reserved) {
      if (!rh && reserved.error().code == Errc::nospc && job->skip_step(reserved.error())) continue;
      return make_error(after_commits(reserved.error(), *job, st));
    }
    timer.mark("step: reserve");
    if (auto a = job->apply(**t, units); !a) return stopped(a.error());
    timer.mark("step: apply");
    if (auto c = (*t)->commit(job->super_changes(units)); !c) return stopped(c.error());
    timer.mark("step: commit");
    st.commits++;
    st.reserved_bytes += *reserved;
    st.used_bytes += (*t)->stats().used_bytes;
    st.tree_blocks_written += (*t)->stats().blocks_written;
    st.tree_blocks_written_early += (*t)->stats().blocks_written_early;
    for (const auto& c : (*t)->chunks().created()) st.chunks_created.push_back({c.logical, c.length, c.type});
    if (auto c = job->committed(units); !c) return make_error(after_commits(c.error(), *job, st));
    if (o.progress) report_step(*o.progress, *job, st.commits, **t, units);
  }
  return st;
}

Result<OneCommit> run_one_commit(fs::FsInfo& fs, const JobFactory& make, bool dry_run, const StopRequest* stop) {
  FSCTL_TRY_ASSIGN(auto job, make(fs));
  RunnerOptions ro;
  ro.dry_run = dry_run;
  ro.stop = stop;
  FSCTL_TRY_ASSIGN(RunStats run, run_batches(fs, *job, make, ro));
  OneCommit out;
  out.rehearsed = run.rehearsed;
  out.reserved_bytes = run.reserved_bytes;
  out.interrupted = run.interrupted;
  if (dry_run || run.interrupted) return out;
  out.wrote = run.commits > 0;
  out.transid = fs.super().generation.get();
  out.used_bytes = run.used_bytes;
  out.blocks_written = run.tree_blocks_written;
  return out;
}

}  // namespace fsctl::transaction
