// SPDX-License-Identifier: GPL-2.0-only
// Lagging superblock copies (issue 12): a crash inside a commit's superblock
// writes (fs::FsInfo::write_supers: primaries, flush, then the copies at
// 64 MiB and 256 GiB) leaves later copies, or other devices' superblocks,
// one generation behind or torn. The filesystem mounts (the newest valid
// copy wins, as in the kernel's SBREAD_RECOVER reading), but the old copies
// stay until the next commit rewrites them all. A write command that had
// nothing to do makes that commit itself, as the kernel does at its next
// transaction.
#pragma once
#include <string>
#include <vector>

#include "lib/fs/fs_info.h"

namespace fsctl::transaction {

struct SuperRefresh {
  std::vector<std::string> lagging;  // the copies found lagging at open (DeviceSet::lagging_supers)
  u64 transid = 0;                   // the commit that rewrote every copy; 0: none was needed
};

/// When a superblock copy of `fs` lagged at open, commits one transaction
/// that changes nothing but the root tree's root block (copied, as every
/// commit does) and the generation, which writes every superblock copy of
/// every device. A filesystem in the middle of a block group tree conversion
/// is left alone (its conversion rerun commits anyway). REQUIRES: `fs`
/// opened for writing; nothing committed since the open. Errors: those of
/// Transaction::start, reserve and commit (Errc::nospc before any write).
[[nodiscard]] Result<SuperRefresh> rewrite_lagging_supers(fs::FsInfo& fs);

}  // namespace fsctl::transaction
