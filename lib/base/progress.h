// SPDX-License-Identifier: GPL-2.0-only
// ProgressObserver: how a long job (convert, balance, qgroup verify and
// repair) tells the front end how far it got (issue 13). The library never
// prints (STYLE.md "I/O and logic"): it hands counts to an observer, which
// cmd/progress.h renders. Calls come from the job's thread, between steps
// and inside them (balance: per tree block), so an observer must be cheap.
#pragma once
#include "lib/base/ints.h"

namespace fsctl {

/// How far a job got, in each unit it counts. A unit whose done and total
/// are both 0 is one the job does not count; a total of 0 with done > 0:
/// counted, total unknown (qgroup verify's tree blocks). A total may change
/// while the job runs (balance: a batch's block groups hold more or fewer
/// tree blocks when their batch starts than at open); done never goes down
/// within a step.
struct ProgressCounts {
  u64 tree_blocks_done = 0, tree_blocks_total = 0;    // tree blocks relocated (balance) or walked (qgroup verify)
  u64 block_groups_done = 0, block_groups_total = 0;  // block groups moved (convert) or relocated and removed (balance)
  u64 bytes_done = 0, bytes_total = 0;                // bytes of those tree blocks (nodesize each)
};

/// One committed step of a batch job (lib/transaction/batch_runner.h).
struct StepRecord {
  u64 step = 0;                 // 1-based, in this run
  u64 transid = 0;              // the commit's transaction id
  u64 units = 0;                // block groups in the step; 0: a step without units (the conversion mark, a removal)
  u64 tree_blocks_written = 0;  // by the step's commit and its early writeback
  u64 used_bytes = 0;           // metadata bytes the step allocated
};

/// Receives progress. The default implementations ignore everything.
class ProgressObserver {
 public:
  virtual ~ProgressObserver() = default;
  /// The counts changed (or the run starts: the first call, with what was
  /// done before this run, e.g. a resumed conversion).
  virtual void on_progress(const ProgressCounts& counts) { (void)counts; }
  /// A step committed; `counts` are the job's after it.
  virtual void on_step(const StepRecord& step, const ProgressCounts& counts) {
    (void)step;
    (void)counts;
  }
};

}  // namespace fsctl
