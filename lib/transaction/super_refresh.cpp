// SPDX-License-Identifier: GPL-2.0-only
// One empty commit that rewrites lagging superblock copies (super_refresh.h).
#include "lib/transaction/super_refresh.h"

#include "lib/format/super.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {

Result<SuperRefresh> rewrite_lagging_supers(fs::FsInfo& fs) {
  SuperRefresh r;
  r.lagging = fs.devices().lagging_supers();
  if (r.lagging.empty()) return r;
  if (fs.super().flags.get() & format::SUPER_FLAG_CHANGING_BG_TREE) return r;
  FSCTL_TRY_ASSIGN(auto t, Transaction::start(fs));
  Reservation res;
  res.items_updated = 1;  // the root tree's root block, copied by every commit
  FSCTL_TRY(t->reserve(res));
  FSCTL_TRY(t->commit(SuperChanges{}));
  r.transid = fs.super().generation.get();
  return r;
}

}  // namespace fsctl::transaction
