// SPDX-License-Identifier: GPL-2.0-only
// The open filesystem of a finished command, left to the process exit.
//
// Why: an FsInfo at the end of a balance or a convert holds up to
// --cache-size of cached tree blocks and the maps of its last transaction in
// about 10^5 heap allocations. Its destructor frees them one by one, walking
// lists that no longer are in the CPU cache: 60-100 ms of a 1.1 s balance -m
// of balance-16snap-4k (perf, bench/RESULTS.md 2026-12-07), work the kernel
// does at once when the process exits.
//
// Safe because nothing an FsInfo does when it goes away matters once the
// command is done: every write reached the disk at its commit (flush, then
// superblocks, then flush), the kernel closes the devices' file descriptors
// (and ends their O_EXCL claim) at exit, and its read-ahead threads only
// wait on their queue. Under a sanitizer the object is destroyed at once, so
// the leak check still sees everything.
#pragma once

#include <memory>
#include <utility>

#include "lib/fs/fs_info.h"

namespace fsctl::cmd {

/// Takes `fs` and keeps it until the process exits (not destroyed; without
/// a sanitizer) or destroys it now (under one). Call only after the
/// command's last write and last read of it. Null: nothing.
void keep_until_exit(std::unique_ptr<fs::FsInfo> fs);

/// keep_until_exit of the command's FsInfo when the command returns, on
/// every path: declare it right after the open, so that it goes away before
/// the FsInfo and after everything declared later (results, reports).
/// REQUIRES: `fs` outlives it.
class KeepUntilExit {
 public:
  explicit KeepUntilExit(std::unique_ptr<fs::FsInfo>& fs) : fs_(fs) {}
  ~KeepUntilExit() { keep_until_exit(std::move(fs_)); }
  KeepUntilExit(const KeepUntilExit&) = delete;
  KeepUntilExit& operator=(const KeepUntilExit&) = delete;

 private:
  std::unique_ptr<fs::FsInfo>& fs_;
};

}  // namespace fsctl::cmd
