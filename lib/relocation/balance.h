// SPDX-License-Identifier: GPL-2.0-only
// `fsctl balance -m`: offline relocation of metadata block groups
// (docs/DESIGN.md "Balance"). Each batch of block groups is one transaction
// that moves their tree blocks (relocate.h), then one that removes the
// emptied groups and returns their space to the devices. A crash leaves a
// committed state; rerunning the same command finishes the work (an emptied
// group still present is matched again and only removed).
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "lib/base/progress.h"
#include "lib/base/stop_request.h"
#include "lib/fs/fs_info.h"
#include "lib/relocation/filters.h"
#include "lib/relocation/relocate.h"
#include "lib/transaction/batch_runner.h"

namespace fsctl::relocation {

struct BalanceOptions {
  /// Filters of metadata (-m) and system (-s) block groups; a kind without
  /// filters is not balanced. As with btrfs balance, -m alone also balances
  /// system block groups with the same filters (the caller sets both).
  std::optional<BalanceFilters> metadata, system;
  u64 batch = 0;            // block groups relocated per transaction; 0: as many as the cache budget holds by used bytes
  bool dry_run = false;     // plan and reserve, write nothing
  bool force = false;       // -f: allow convert= to a profile with fewer copies
  /// Told the tree blocks relocated of those in the selected block groups
  /// (and their bytes) as each is copied, and the block groups relocated
  /// and removed of those selected after each commit (ProgressCounts). The
  /// tree block total is the selected groups' used bytes at open over
  /// nodesize, corrected when each batch is planned (a group may have
  /// gained or lost blocks by then). Null: nobody.
  ProgressObserver* progress = nullptr;
  /// Raised by signal handlers: stop between transactions (level 1) or
  /// abandon the one in progress (level 2); the report then says `interrupted`.
  const StopRequest* stop = nullptr;
};

/// A selected block group the run left in place: its relocation's
/// reservation did not fit even alone, or (empty) its removal's did not
/// (Errc::nospc before any change).
struct NotRelocated {
  u64 start = 0;
  u64 flags = 0;       // BLOCK_GROUP_* type and profile
  std::string reason;  // the reservation's message
};

struct BalanceReport {
  u64 block_groups_metadata = 0;   // metadata block groups before
  u64 block_groups_system = 0;     // system block groups before
  u64 block_groups_selected = 0;   // matched by the filters (and limit)
  u64 block_groups_relocated = 0;  // emptied by relocation
  u64 block_groups_removed = 0;    // removed (chunk and dev extents freed)
  u64 tree_blocks_total = 0;       // tree blocks in the selected groups (as BalanceOptions::progress counts them)
  u64 tree_blocks_done = 0;        // of those, relocated by a committed transaction
  std::vector<u64> selected;       // their logical starts, in processing order
  /// Selected groups left where they are for lack of space, in processing
  /// order; the others were relocated (as the kernel's balance goes on past
  /// a chunk it cannot relocate).
  std::vector<NotRelocated> not_relocated;
  /// A dry run that ran the whole balance on an in-memory copy (so it says
  /// exactly what the real run does); false: only the first batch was
  /// planned (the copy would need more memory than allowed).
  bool whole_run_simulated = false;
  RelocationStats relocation;
  u64 commits = 0;
  u64 tree_blocks_written = 0;
  u64 tree_blocks_written_early = 0;  // of tree_blocks_written: by bounded writeback before a commit
  u64 reserved_bytes = 0;  // sum over transactions (dry run: the first batch's)
  u64 used_bytes = 0;      // metadata bytes newly allocated, sum over transactions
  /// Chunks the run created (for the relocated copies), in order. A dry run
  /// knows them only when whole_run_simulated.
  std::vector<transaction::RunStats::ChunkCreated> chunks_created;
  bool dry_run = false;
  bool interrupted = false;  // stopped early by BalanceOptions::stop
  std::string state_note;    // then: where the filesystem stands, how to go on
  double seconds = 0;
};

/// Balances metadata block groups. REQUIRES: `fs` opened for writing with
/// block groups loaded. Refusals before anything is written (Errc::unsupported
/// with what to do): a paused kernel balance (BALANCE_ITEM in the root tree),
/// leftover relocation trees, a subvolume being deleted, mixed data+metadata
/// block groups, an unsupported convert target; and those of
/// Transaction::start (log tree, conversion in progress, ...); Errc::nospc
/// when no selected group could be relocated (nothing written). A group
/// whose relocation does not fit is tried alone, then left in place and
/// listed in not_relocated while the run goes on. A dry run runs the whole
/// balance on an in-memory copy of the filesystem when that fits in
/// memory, so its report is the real run's. An error after the first commit
/// leaves the last committed batch on disk (resumable).
[[nodiscard]] Result<BalanceReport> balance_metadata(fs::FsInfo& fs, const BalanceOptions& opts);

}  // namespace fsctl::relocation
