// SPDX-License-Identifier: GPL-2.0-only
// The open filesystem of a finished command, left to the process exit
// (keep_until_exit.h).
#include "cmd/keep_until_exit.h"

#include <vector>

#include "lib/base/sanitizer.h"

namespace fsctl::cmd {

void keep_until_exit(std::unique_ptr<fs::FsInfo> fs) {
  if (!fs) return;
  if constexpr (BUILT_WITH_SANITIZER) {
    fs.reset();
  } else {
    // Held by plain pointers, never deleted: no destructor runs at exit
    // either (a static unique_ptr's would, after main returns), and a memory
    // checker still finds the object reachable.
    static std::vector<fs::FsInfo*> kept;
    kept.push_back(fs.release());
  }
}

}  // namespace fsctl::cmd
