// SPDX-License-Identifier: GPL-2.0-only
// Write side of FsInfo's volume state: chunks and block groups a transaction
// creates or removes (kernel: the mapping tree and block group cache updated
// by btrfs_create_chunk / btrfs_remove_chunk), DEV_ITEM updates, and the
// reload after a commit (DESIGN.md "Writing", invariant 3: an aborted
// transaction leaves the state it found).
#include <algorithm>

#include "lib/fs/fs_info.h"

namespace fsctl::fs {
using namespace fsctl::format;

void FsInfo::restore_volume_state(VolumeState state) {
  chunk_map_ = std::move(state.chunk_map);
  block_groups_ = std::move(state.block_groups);
  dev_items_ = std::move(state.dev_items);
}

Status FsInfo::add_chunk(const Chunk& chunk, const BlockGroup& bg) {
  if (bg.start != chunk.logical || bg.length != chunk.length)
    return make_error(Errc::invalid_argument, "block group " + std::to_string(bg.start) + " does not match chunk " + std::to_string(chunk.logical));
  FSCTL_TRY(chunk_map_.add(chunk));
  auto it = std::lower_bound(block_groups_.begin(), block_groups_.end(), bg.start,
                             [](const BlockGroup& b, u64 s) { return b.start < s; });
  block_groups_.insert(it, bg);
  return {};
}

void FsInfo::remove_chunk(u64 logical) {
  chunk_map_.remove(logical);
  std::erase_if(block_groups_, [&](const BlockGroup& b) { return b.start == logical; });
}

void FsInfo::set_block_group_used(u64 start, u64 used) {
  auto it = std::lower_bound(block_groups_.begin(), block_groups_.end(), start,
                             [](const BlockGroup& b, u64 s) { return b.start < s; });
  if (it != block_groups_.end() && it->start == start) it->used = used;
}

void FsInfo::set_dev_item(const DevItem& item) { dev_items_[item.devid.get()] = item; }

Status FsInfo::reload_chunks() {
  VolumeState old = volume_state();
  BgTreeState old_bg = bg_state_;
  chunk_map_ = volumes::ChunkMap();
  dev_items_.clear();
  Status st = load_sys_chunk_array();
  if (st) st = load_chunk_tree();
  if (st && block_groups_loaded_) {
    block_groups_.clear();
    bg_state_ = BgTreeState{};
    st = load_block_groups();
  }
  if (!st) {
    restore_volume_state(std::move(old));
    bg_state_ = old_bg;
    return make_error(st.error().context("reloading chunks after a commit"));
  }
  return {};
}

}  // namespace fsctl::fs
