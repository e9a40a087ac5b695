// SPDX-License-Identifier: GPL-2.0-only
// The read-only open shared by all read commands.
#include <cstdio>

#include "cmd/commands.h"
#include "cmd/env_hooks.h"
#include "lib/io/mount_check.h"
#include "lib/transaction/super_refresh.h"

namespace fsctl::cmd {

// Read-only commands warn about a mounted device (its contents may change under us).
static void warn_if_mounted(const std::vector<std::string>& devs, Reporter& rep) {
  for (auto& d : devs) {
    auto m = io::find_mount(d);
    if (m && *m) rep.warning(d + ": device is mounted on " + **m + "; what is read may be inconsistent");
  }
}

Result<std::unique_ptr<fs::FsInfo>> open_read_only(const std::vector<std::string>& devs, const GlobalOptions& g,
                                                  Reporter& rep, bool load_bgs) {
  warn_if_mounted(devs, rep);
  fs::OpenOptions o;
  o.cache_bytes = g.cache_bytes;
  o.reporter = &rep;
  o.load_block_groups = load_bgs;
  if (g.hooks) g.hooks->apply(o);
  FSCTL_TRY_ASSIGN(auto fs, fs::FsInfo::open(devs, o));
  if (u64 unk = fs->unknown_incompat())
    rep.warning("filesystem has incompat features fsctl does not read (" + format::flag_names(unk, format::incompat_bits()) +
                "); output may be incomplete");
  if (fs->super().log_root.get())
    rep.warning("log tree at " + std::to_string(fs->super().log_root.get()) +
                " needs replay (mount the filesystem once); write commands will refuse it");
  return fs;
}

Result<std::unique_ptr<fs::FsInfo>> open_read_write(const std::vector<std::string>& devs, const GlobalOptions& g,
                                                   Reporter& rep) {
  fs::OpenOptions o;
  o.cache_bytes = g.cache_bytes;
  o.reporter = &rep;
  o.load_block_groups = true;
  o.write = true;
  if (g.hooks) g.hooks->apply(o);
  FSCTL_TRY_ASSIGN(auto fs, fs::FsInfo::open(devs, o));
  // A filesystem mounted through another path (another loop device, a
  // multi-device member) is known to the kernel by its fsid.
  std::string fsid = format::uuid_to_string(fs->super().fsid);
  if (io::fsid_is_mounted(fsid))
    return make_error(Errc::busy, devs[0] + ": filesystem " + fsid + " is mounted; unmount it first");
  if (g.hooks) g.hooks->hold_after_write_open();
  return fs;
}

void refresh_lagging_supers(fs::FsInfo& fs, Reporter& rep) {
  auto r = transaction::rewrite_lagging_supers(fs);
  if (!r) {
    rep.warning("lagging superblock copies were not rewritten: " + r.error().message);
    return;
  }
  if (r->transid == 0) return;
  for (auto& l : r->lagging) rep.notice(l);
  rep.notice("rewrote every superblock copy in transaction " + std::to_string(r->transid) + " (" +
             std::to_string(r->lagging.size()) + " were lagging or damaged)");
}

}  // namespace fsctl::cmd
