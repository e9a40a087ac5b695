// SPDX-License-Identifier: GPL-2.0-only
// SpaceAllocator (space_allocator.h): metadata space loaded from the free
// space tree (FREE_SPACE_EXTENT and FREE_SPACE_BITMAP items of each metadata
// and system block group), minus the superblock mirror ranges, which the free
// space tree lists as free and the kernel excludes only in memory
// (exclude_super_stripes). System block groups hold chunk tree blocks only.
#include "lib/transaction/space_allocator.h"

#include <algorithm>
#include <optional>

#include "lib/ctree/search.h"
#include "lib/format/free_space.h"
#include "lib/format/free_space_info.h"
#include "lib/format/super.h"
#include "lib/fs/fs_info.h"
#include "lib/volumes/chunk_map.h"

namespace fsctl::transaction {
using namespace fsctl::format;

namespace {
// Removes [a, b) from a free map.
void carve(std::map<u64, u64>& free, u64 a, u64 b) {
  auto it = free.upper_bound(a);
  if (it != free.begin()) --it;
  while (it != free.end() && it->first < b) {
    u64 s = it->first, e = s + it->second;
    if (e <= a) {
      ++it;
      continue;
    }
    it = free.erase(it);
    if (s < a) free[s] = a - s;
    if (e > b) free[b] = e - b;
  }
}

// Every free range of `sp` must be free in the extent tree too.
Status check_free_against_extents(ctree::BlockSource& src, const fs::FsInfo& fs, const BlockGroupSpace& sp) {
  auto ext = fs.find_root(EXTENT_TREE_OBJECTID);
  if (!ext) return make_error(Errc::corrupt, "no extent tree");
  u32 ns = fs.nodesize();
  ctree::KeyRange range{{sp.start, 0, 0}, {sp.start + sp.length - 1, 0xff, ~0ULL}};
  return ctree::for_each_item(src, *ext, range, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
    Key k = leaf.item_key(slot);
    u64 len = k.type == KeyType::EXTENT_ITEM ? k.offset : k.type == KeyType::METADATA_ITEM ? ns : 0;
    if (len == 0) return ctree::Visit::next;
    auto it = sp.free.upper_bound(k.objectid + len - 1);
    if (it != sp.free.begin()) {
      --it;
      if (it->first + it->second > k.objectid)
        return make_error(Errc::corrupt, "the free space tree lists [" + std::to_string(it->first) + ", " +
                                             std::to_string(it->first + it->second) + ") of block group " + std::to_string(sp.start) +
                                             " as free, but extent " + std::to_string(k.objectid) + " (" + std::to_string(len) +
                                             " bytes, extent tree leaf " + std::to_string(leaf.bytenr()) +
                                             ") is in use there; refusing to write (rebuild the free space tree: mount once with -o clear_cache,space_cache=v2)");
    }
    return ctree::Visit::next;
  });
}

}  // namespace

Status SpaceAllocator::load(ctree::BlockSource& src, const fs::FsInfo& fs) {
  if (loaded_) return {};
  auto fst = fs.find_root(FREE_SPACE_TREE_OBJECTID);
  if (!fst) return make_error(Errc::unsupported, "no free space tree");
  u32 ss = fs.sectorsize();
  for (auto& bg : fs.block_groups()) {
    if (!(bg.flags & (BLOCK_GROUP_METADATA | BLOCK_GROUP_SYSTEM))) continue;
    BlockGroupSpace sp;
    sp.start = bg.start;
    sp.length = bg.length;
    sp.flags = bg.flags;
    ctree::KeyRange range{{bg.start, KeyType::FREE_SPACE_EXTENT, 0}, {bg.start + bg.length - 1, KeyType::FREE_SPACE_BITMAP, ~0ULL}};
    FSCTL_TRY(ctree::for_each_item(src, *fst, range, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
      Key k = leaf.item_key(slot);
      if (k.objectid + k.offset > bg.start + bg.length)
        return make_error(Errc::corrupt, "free space item " + key_to_string(k) + " crosses the end of block group " + std::to_string(bg.start));
      if (k.type == KeyType::FREE_SPACE_EXTENT) {
        sp.free[k.objectid] = k.offset;
      } else if (k.type == KeyType::FREE_SPACE_BITMAP) {
        FSCTL_TRY(for_each_free_run(k, leaf.item_data(slot), ss, [&](u64 start, u64 len) { sp.free[start] = len; }));
      }
      return ctree::Visit::next;
    }));
    // Merge touching runs (bitmap boundaries) so allocation sees whole ranges.
    std::map<u64, u64> merged;
    for (auto& [st, len] : sp.free) {
      if (!merged.empty()) {
        auto last = std::prev(merged.end());
        if (last->first + last->second == st) {
          last->second += len;
          continue;
        }
      }
      merged[st] = len;
    }
    sp.free = std::move(merged);
    // The block group's FREE_SPACE_INFO must count exactly these extents
    // (kernel free-space-tree.c keeps extent_count so); a wrong count would
    // be carried on by every update.
    {
      FSCTL_TRY_ASSIGN(auto info, ctree::lookup_item(src, *fst, Key{bg.start, KeyType::FREE_SPACE_INFO, bg.length}));
      if (!info) return make_error(Errc::corrupt, "free space tree has no FREE_SPACE_INFO for block group " + std::to_string(bg.start));
      auto info_rec = decode_free_space_info(*info);
      if (!info_rec) return make_error(info_rec.error().context("block group " + std::to_string(bg.start)));
      u32 count = info_rec->extent_count;
      sp.extent_count = count;
      sp.using_bitmaps = info_rec->using_bitmaps();
      if (count != sp.free.size())
        return make_error(Errc::corrupt, "FREE_SPACE_INFO of block group " + std::to_string(bg.start) + " has extent_count " +
                                             std::to_string(count) + " expect " + std::to_string(sp.free.size()) +
                                             " (free extents listed); refusing to write");
    }
    // Superblock copies inside this block group (kernel exclude_super_stripes).
    const Chunk* chunk = fs.chunk_map().find(bg.start);
    if (!chunk) return make_error(Errc::corrupt, "block group " + std::to_string(bg.start) + " has no chunk");
    for (auto [a, b] : volumes::super_mirror_ranges(*chunk)) carve(sp.free, a, b);
    // Never trust a free range the extent tree contradicts: a damaged free
    // space tree would make us write over live metadata or data.
    FSCTL_TRY(check_free_against_extents(src, fs, sp));
    add_group(std::move(sp));
  }
  loaded_ = true;
  return {};
}

void SpaceAllocator::add_group(BlockGroupSpace sp) {
  ((sp.flags & BLOCK_GROUP_SYSTEM) ? sys_space_ : space_).push_back(std::move(sp));
}

void SpaceAllocator::remove_group(u64 start) {
  space_.remove_if([&](const BlockGroupSpace& s) { return s.start == start; });
  sys_space_.remove_if([&](const BlockGroupSpace& s) { return s.start == start; });
}

std::optional<u64> SpaceAllocator::find(u64 len, bool system, u32 nodesize) {
  return find_in(system ? sys_space_ : space_, len, nodesize);
}

BlockGroupSpace* SpaceAllocator::group_of(u64 bytenr) {
  for (auto* spaces : {&space_, &sys_space_})
    for (auto& s : *spaces)
      if (bytenr >= s.start && bytenr - s.start < s.length) return &s;
  return nullptr;
}

void SpaceAllocator::give_back(u64 bytenr, u32 nodesize) {
  BlockGroupSpace* s = group_of(bytenr);
  if (!s) return;
  s->free[bytenr] = nodesize;
  s->reuse.push_back(bytenr);
}

u64 SpaceAllocator::free_metadata_bytes(u32 ns) const {
  u64 avail = 0;
  for (auto& sp : space_)
    if (!excluded_.count(sp.start))
      for (auto& [st, len] : sp.free) avail += len / ns * ns;
  return avail;
}

void SpaceAllocator::add_chunk(const Chunk& chunk) {
  BlockGroupSpace sp;
  sp.start = chunk.logical;
  sp.length = chunk.length;
  sp.flags = chunk.type;
  sp.free[chunk.logical] = chunk.length;
  sp.extent_count = 1;  // its FREE_SPACE_INFO and one extent are inserted at commit
  for (auto [a, b] : volumes::super_mirror_ranges(chunk)) carve(sp.free, a, b);
  add_group(std::move(sp));
}

// Allocation policy (the kernel allocates metadata from clusters for the
// same reason): the next block comes from where the previous one ended while
// that free extent lasts, else from the next free extent of at least CLUSTER
// bytes (searching on from there, then from the start), and only when no
// such extent is left from the first extent that fits. A commit's new blocks
// are then mostly contiguous and written with few large requests, instead of
// filling every small hole first.
std::optional<u64> SpaceAllocator::find_in(std::list<BlockGroupSpace>& spaces, u64 len, u32 ns) {
  constexpr u64 CLUSTER = 2ULL << 20;
  auto try_take = [&](BlockGroupSpace& sp, std::map<u64, u64>::iterator it, u64 min_len) -> std::optional<u64> {
    u64 s = (it->first + ns - 1) / ns * ns;
    u64 e = it->first + it->second;
    if (s + len > e || e - s < min_len) return std::nullopt;
    if (pinned_.count(s)) return std::nullopt;
    carve(sp.free, s, s + len);
    sp.cursor = s + len;
    return s;
  };
  for (auto& sp : spaces) {
    if (excluded_.count(sp.start)) continue;
    while (!sp.reuse.empty()) {
      u64 b = sp.reuse.back();
      sp.reuse.pop_back();
      auto it = sp.free.upper_bound(b);
      if (it == sp.free.begin()) continue;
      --it;
      if (b % ns || it->first + it->second < b + len || pinned_.count(b)) continue;  // taken or merged away meanwhile
      carve(sp.free, b, b + len);
      return b;
    }
    if (sp.cursor) {
      auto it = sp.free.find(sp.cursor);
      if (it != sp.free.end())
        if (auto s = try_take(sp, it, len)) return *s;
    }
    auto from = sp.free.lower_bound(sp.cursor);
    for (auto it = from; it != sp.free.end(); ++it)
      if (auto s = try_take(sp, it, CLUSTER)) return *s;
    for (auto it = sp.free.begin(); it != from; ++it)
      if (auto s = try_take(sp, it, CLUSTER)) return *s;
  }
  for (auto& sp : spaces) {
    if (excluded_.count(sp.start)) continue;
    for (auto it = sp.free.begin(); it != sp.free.end(); ++it)
      if (auto s = try_take(sp, it, len)) return *s;
  }
  return std::nullopt;
}

}  // namespace fsctl::transaction
