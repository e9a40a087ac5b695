// SPDX-License-Identifier: GPL-2.0-only
// FsInfo::rehearsal_copy (fs_info.h): the filesystem as it is, over in-memory
// overlays of its devices, for a rehearsal of a write job (DESIGN.md
// invariant 4: the rehearsal measures what each batch allocates, the real
// run reserves it).
#include "lib/fs/fs_info.h"

#include <algorithm>

namespace fsctl::fs {

Result<RehearsalCopy> FsInfo::rehearsal_copy(u64 overlay_bytes) {
  auto budget = std::make_shared<io::OverlayBudget>();
  budget->limit = overlay_bytes;
  // The copy reads what this FsInfo has cached; its own cache is small.
  u64 cache_bytes = std::min<u64>(cache_.budget(), 16ULL << 20);
  std::vector<std::unique_ptr<io::BlockDevice>> devs;
  for (auto& [devid, d] : devices_.devices()) devs.push_back(io::make_overlay_device(*d.dev, budget));
  std::unique_ptr<FsInfo> c(new FsInfo());
  c->reporter_ = &null_reporter();
  // The copy's commits reach memory only: nobody is told about them.
  c->observer_ = &null_commit_observer();
  c->label_ = label_;
  FSCTL_TRY_ASSIGN(c->devices_, volumes::DeviceSet::from_devices(std::move(devs), *c->reporter_));
  c->writable_ = true;
  c->set_cache_budget(cache_bytes);
  c->super_ = super_;
  c->chunk_map_ = chunk_map_;
  c->identity_ = identity_;
  c->roots_ = roots_;
  c->dev_items_ = dev_items_;
  c->block_groups_ = block_groups_;
  c->bg_state_ = bg_state_;
  c->block_groups_loaded_ = block_groups_loaded_;
  c->parent_ = this;
  return RehearsalCopy{std::move(c), std::move(budget)};
}

}  // namespace fsctl::fs
