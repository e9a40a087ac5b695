// SPDX-License-Identifier: GPL-2.0-only
// Block group tree conversion, both directions, batched and resumable, in
// the on-disk form btrfs-progs' btrfstune uses (tune/convert-bgt.c): tree 11
// with its ROOT_ITEM in the root tree, super flag CHANGING_BG_TREE while
// converting, block groups moved from the highest start down, compat_ro
// BLOCK_GROUP_TREE set when done. A crash leaves a committed state; rerunning
// the same command finishes it (DESIGN.md invariant 3).
#pragma once
#include <functional>
#include <string>

#include "lib/base/progress.h"
#include "lib/base/stop_request.h"
#include "lib/fs/fs_info.h"

namespace fsctl::convert {

enum class Direction { to_bg_tree, to_extent_tree };

struct ConvertOptions {
  Direction direction = Direction::to_bg_tree;
  u64 batch = 1024;      // block groups moved per commit
  bool dry_run = false;  // compute and report, write nothing
  /// Told the block groups done and their total (ProgressCounts
  /// block_groups_*): at the start, after each block group item moved and
  /// after each commit. Whole-filesystem counts (in the destination tree,
  /// all of them; a resumed run counts from where it was left); taking back
  /// a half conversion counts the groups moved back of those to move back.
  /// Null: nobody.
  ProgressObserver* progress = nullptr;
  /// Raised by signal handlers: stop between batches (level 1) or abandon
  /// the batch in progress (level 2); the report then says `interrupted`.
  const StopRequest* stop = nullptr;
};

struct ConvertReport {
  std::string state_before;   // BgTreeState::describe() at start
  std::string state_after;
  bool already_done = false;  // nothing to do: the filesystem is in the asked state
  bool resumed = false;       // a half-done conversion (ours or btrfstune's) was continued
  u64 block_groups_total = 0;
  u64 block_groups_to_move = 0;  // items in the source tree at the start (a resumed run: the rest)
  u64 block_groups_already_moved = 0;  // a resumed run: items already in the destination at the start
  u64 block_groups_moved = 0;
  /// Whole-filesystem progress when the run ended (as ConvertOptions::progress
  /// counts): block groups in the destination tree (taking back: moved back)
  /// of block_groups_total (taking back: of those to move back).
  u64 block_groups_done = 0;
  u64 commits = 0;
  u64 batch = 0;  // block groups per commit used: the asked --batch, halved while its reservation did not fit
  u64 tree_blocks_written = 0;
  u64 tree_blocks_written_early = 0;  // of tree_blocks_written: by bounded writeback before a commit
  u64 reserved_bytes = 0;  // sum over commits (dry run: the whole run's preflight reservation)
  u64 used_bytes = 0;      // metadata bytes allocated, sum over commits
  u64 estimated_tree_blocks = 0;  // dry run: blocks the new tree and the copies will take
  bool set_no_holes = false;
  bool interrupted = false;  // stopped early by ConvertOptions::stop
  /// The filesystem was half converted in the other direction: this run
  /// takes that conversion back (moves the moved items back, lowest first).
  bool reverting = false;
  /// Where the filesystem stands when the run stopped early (interrupted),
  /// and how to go on: "nothing was written", or the half state and the
  /// command that finishes it.
  std::string state_note;
  double seconds = 0;
};

/// Converts. REQUIRES: `fs` opened for writing with block groups loaded.
/// Errors (nothing written): Errc::unsupported for missing prerequisites
/// (FREE_SPACE_TREE_VALID; the message says how to get it), a log tree, an
/// unknown incompat bit, a half-done conversion in the other direction;
/// Errc::nospc when metadata space cannot hold the work. Errors during the
/// run leave the last committed batch on disk (a resumable state).
[[nodiscard]] Result<ConvertReport> convert_bg_tree(fs::FsInfo& fs, const ConvertOptions& opts);

}  // namespace fsctl::convert
