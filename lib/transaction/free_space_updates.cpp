// SPDX-License-Identifier: GPL-2.0-only
// FreeSpaceUpdates (free_space_updates.h): free space tree updates at commit
// (kernel free-space-tree.c
// add_to_free_space_tree / remove_from_free_space_tree): extent form merges
// or splits FREE_SPACE_EXTENT items; bitmap form flips bits. Both keep
// FREE_SPACE_INFO.extent_count right, and a group whose count the updates
// changed converts between the forms at the kernel's thresholds
// (update_free_space_extent_count, convert_free_space_to_bitmaps /
// _to_extents), once per transaction, after the updates: copy-on-write inside the transaction like every other
// change (DESIGN.md invariant 1), counted by the reservation (invariant 4).
#include <functional>
#include <set>
#include <span>

#include "lib/transaction/free_space_updates.h"

#include "lib/ctree/search.h"
#include "lib/format/free_space.h"
#include "lib/format/free_space_info.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

namespace {

struct Ctx {
  Transaction& t;
  ctree::WriteRoot& root;
  const BlockGroupSpace& bg;
  u32 ss;
  std::set<u64>& count_changed;  // starts of the groups whose extent_count changed
};

// The key of the last item at or before `key`, if any (read-only search).
Result<std::optional<Key>> item_at_or_before(Transaction& t, const ctree::RootRef& r, const Key& key) {
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot(t, r, key, p));
  if (exact) return std::optional<Key>(key);
  FSCTL_TRY_ASSIGN(bool has, ctree::prev_item(t, p));
  if (!has) return std::optional<Key>{};
  return std::optional<Key>(p.key());
}

Result<std::optional<Key>> item_at_or_after(Transaction& t, const ctree::RootRef& r, const Key& key) {
  ctree::Path p;
  FSCTL_TRY(ctree::search_slot(t, r, key, p));
  FSCTL_TRY_ASSIGN(bool has, ctree::normalize(t, p));
  if (!has) return std::optional<Key>{};
  return std::optional<Key>(p.key());
}

Status delete_key(Ctx& c, const Key& k) {
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(c.t, c.root, k, 0, p));
  if (!exact) return make_error(Errc::corrupt, "free space item " + key_to_string(k) + " vanished");
  return ctree::delete_item(c.t, c.root, p);
}

Status insert_extent(Ctx& c, u64 start, u64 len) {
  return ctree::insert_item(c.t, c.root, Key{start, KeyType::FREE_SPACE_EXTENT, len}, {});
}

// Calls `fn` with the group's FREE_SPACE_INFO, decoded from the item
// copied into the transaction, and stores what `fn` leaves in it.
Status with_info(Ctx& c, const std::function<void(FreeSpaceInfoRecord&)>& fn) {
  ctree::Path p;
  Key info{c.bg.start, KeyType::FREE_SPACE_INFO, c.bg.length};
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(c.t, c.root, info, 0, p));
  if (!exact) return make_error(Errc::corrupt, "free space tree has no FREE_SPACE_INFO for block group " + std::to_string(c.bg.start));
  auto d = ctree::item_data_mut(c.t, p);
  auto rec = decode_free_space_info(d);
  if (!rec) return make_error(rec.error().context("block group " + std::to_string(c.bg.start)));
  fn(*rec);
  return store_free_space_info(d, *rec);
}

// Sets or clears FREE_SPACE_USING_BITMAPS in the group's FREE_SPACE_INFO.
Status set_using_bitmaps(Ctx& c, bool on) {
  return with_info(c, [&](FreeSpaceInfoRecord& info) {
    info.flags = on ? info.flags | FREE_SPACE_USING_BITMAPS : info.flags & ~FREE_SPACE_USING_BITMAPS;
  });
}

// The group's free space as one bit per sector (bit i: the sector at
// bg.start + i * sectorsize; byte i / 8, bit i % 8 as in bitmap items), and
// the keys of the items of `type` that described it.
struct GroupBits {
  std::vector<u8> bits;
  std::vector<Key> keys;
};

// Reads every free space item of the group's key range; they must all be of
// `type` (FREE_SPACE_EXTENT or FREE_SPACE_BITMAP: the group's form), lie in
// the group and be sector-aligned. Errors: Errc::corrupt otherwise.
Result<GroupBits> read_group_bits(Ctx& c, u8 type) {
  GroupBits g;
  g.bits.assign(free_space_bitmap_size(c.bg.length, c.ss), 0);
  u64 end = c.bg.start + c.bg.length;
  auto set = [&](u64 first, u64 count) {
    for (u64 i = first; i < first + count; ++i) g.bits[i / 8] = static_cast<u8>(g.bits[i / 8] | (1u << (i % 8)));
  };
  ctree::KeyRange range{{c.bg.start, KeyType::FREE_SPACE_EXTENT, 0}, {end - 1, KeyType::FREE_SPACE_BITMAP, ~0ULL}};
  FSCTL_TRY(ctree::for_each_item(c.t, c.root.ref(), range, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
    Key k = leaf.item_key(slot);
    if (k.type != KeyType::FREE_SPACE_EXTENT && k.type != KeyType::FREE_SPACE_BITMAP) return ctree::Visit::next;
    if (k.type != type)
      return make_error(Errc::corrupt, "free space item " + key_to_string(k) + " in block group " + std::to_string(c.bg.start) +
                                           ", whose FREE_SPACE_INFO says " + (type == KeyType::FREE_SPACE_BITMAP ? "bitmaps" : "extents"));
    if (k.offset == 0 || k.offset > end - k.objectid || (k.objectid - c.bg.start) % c.ss || k.offset % c.ss)
      return make_error(Errc::corrupt, "free space item " + key_to_string(k) + " is not sector-aligned inside block group " +
                                           std::to_string(c.bg.start));
    u64 first = (k.objectid - c.bg.start) / c.ss;
    if (type == KeyType::FREE_SPACE_EXTENT) {
      set(first, k.offset / c.ss);
    } else {
      FSCTL_TRY(for_each_free_run(k, leaf.item_data(slot), c.ss,
                                  [&](u64 start, u64 len) { set((start - c.bg.start) / c.ss, len / c.ss); }));
    }
    g.keys.push_back(k);
    return ctree::Visit::next;
  }));
  return g;
}

// Maximal runs of set bits of a group's bitmap: (logical start, length).
std::vector<std::pair<u64, u64>> free_runs(const Ctx& c, const std::vector<u8>& bits) {
  std::vector<std::pair<u64, u64>> runs;
  u64 nbits = c.bg.length / c.ss, run = 0;
  for (u64 i = 0; i <= nbits; ++i) {
    if (i < nbits && ((bits[i / 8] >> (i % 8)) & 1)) {
      ++run;
    } else if (run) {
      runs.emplace_back(c.bg.start + (i - run) * c.ss, run * c.ss);
      run = 0;
    }
  }
  return runs;
}

// Extent form -> bitmap form (kernel convert_free_space_to_bitmaps): every
// FREE_SPACE_EXTENT of the group is deleted, USING_BITMAPS is set and the
// group gets FREE_SPACE_BITMAP items of FREE_SPACE_BITMAP_BITS sectors each
// (the last one shorter), key (start, FREE_SPACE_BITMAP, bytes covered).
// extent_count stays: it counts runs of free space in either form.
Status convert_to_bitmaps(Ctx& c, u32 extent_count) {
  FSCTL_TRY_ASSIGN(GroupBits g, read_group_bits(c, KeyType::FREE_SPACE_EXTENT));
  // The free space as runs must match the count, as in the kernel, which
  // aborts on a mismatch: all before the first change.
  std::size_t runs = free_runs(c, g.bits).size();
  if (g.keys.size() != extent_count || runs != extent_count)
    return make_error(Errc::corrupt, "block group " + std::to_string(c.bg.start) + " has " + std::to_string(g.keys.size()) +
                                         " FREE_SPACE_EXTENT items making " + std::to_string(runs) +
                                         " separate free runs, FREE_SPACE_INFO extent_count " + std::to_string(extent_count) +
                                         ": refusing to convert it to bitmaps");
  for (const Key& k : g.keys) FSCTL_TRY(delete_key(c, k));
  FSCTL_TRY(set_using_bitmaps(c, true));
  u64 range = u64{c.ss} * FREE_SPACE_BITMAP_BITS;
  u64 end = c.bg.start + c.bg.length;
  for (u64 at = c.bg.start; at < end; at += range) {
    u64 len = std::min(end - at, range);
    u64 byte = (at - c.bg.start) / c.ss / 8;  // range is a whole number of bytes of bits
    std::span<const u8> data(g.bits.data() + byte, free_space_bitmap_size(len, c.ss));
    FSCTL_TRY(ctree::insert_item(c.t, c.root, Key{at, KeyType::FREE_SPACE_BITMAP, len}, data));
  }
  return {};
}

// Bitmap form -> extent form (kernel convert_free_space_to_extents): every
// FREE_SPACE_BITMAP of the group is deleted, USING_BITMAPS is cleared and
// each maximal run of free sectors (across bitmap items) becomes one
// FREE_SPACE_EXTENT.
Status convert_to_extents(Ctx& c, u32 extent_count) {
  FSCTL_TRY_ASSIGN(GroupBits g, read_group_bits(c, KeyType::FREE_SPACE_BITMAP));
  auto runs = free_runs(c, g.bits);
  if (runs.size() != extent_count)
    return make_error(Errc::corrupt, "block group " + std::to_string(c.bg.start) + " has " + std::to_string(runs.size()) +
                                         " free runs in its bitmaps, FREE_SPACE_INFO extent_count " + std::to_string(extent_count) +
                                         ": refusing to convert it to extents");
  for (const Key& k : g.keys) FSCTL_TRY(delete_key(c, k));
  FSCTL_TRY(set_using_bitmaps(c, false));
  for (auto [start, len] : runs) FSCTL_TRY(insert_extent(c, start, len));
  return {};
}

// Adds `delta` to the group's extent_count and records the group for the
// form check (convert_if_needed) at the end of the updates.
Status update_extent_count(Ctx& c, s64 delta) {
  if (delta == 0) return {};
  FSCTL_TRY(with_info(c, [&](FreeSpaceInfoRecord& info) {
    info.extent_count = static_cast<u32>(static_cast<s64>(info.extent_count) + delta);
  }));
  c.count_changed.insert(c.bg.start);
  return {};
}

// Converts the group to bitmaps when in extent form with more than
// bitmap_high_thresh extents, and back to extents when in bitmap form with
// fewer than bitmap_low_thresh (the kernel's rule, which it applies after
// every update that changes the count: update_free_space_extent_count).
// Applied once per group per transaction, after the updates, on the count
// they left: the kernel reads either form whatever the count (it converts
// on its next update), and a group can then not flip back and forth inside
// one commit, which bounds the conversions the reservation must count to
// one per group (reservation.cpp). Returns whether it converted.
Result<bool> convert_if_needed(Ctx& c) {
  u32 count = 0, flags = 0;
  FSCTL_TRY(with_info(c, [&](FreeSpaceInfoRecord& info) {
    count = info.extent_count;
    flags = info.flags;
  }));
  FreeSpaceThresholds th = free_space_thresholds(c.bg.length, c.ss);
  bool bitmaps = flags & FREE_SPACE_USING_BITMAPS;
  if (!bitmaps && count > th.bitmap_high_thresh) {
    FSCTL_TRY(convert_to_bitmaps(c, count));
    return true;
  }
  if (bitmaps && count < th.bitmap_low_thresh) {
    FSCTL_TRY(convert_to_extents(c, count));
    return true;
  }
  return false;
}

// Extent form.
Status extent_mark(Ctx& c, u64 a, u64 n, bool now_free) {
  // Every search takes the root afresh: a deletion may have merged blocks
  // or collapsed the root.
  if (!now_free) {
    FSCTL_TRY_ASSIGN(auto k, item_at_or_before(c.t, c.root.ref(), Key{a, KeyType::FREE_SPACE_EXTENT, ~0ULL}));
    if (!k || k->type != KeyType::FREE_SPACE_EXTENT || k->objectid > a || k->objectid + k->offset < a + n)
      return make_error(Errc::corrupt, "free space tree does not list [" + std::to_string(a) + ", +" + std::to_string(n) +
                                           ") as free in block group " + std::to_string(c.bg.start));
    u64 s = k->objectid, e = s + k->offset;
    FSCTL_TRY(delete_key(c, *k));
    s64 pieces = 0;
    if (s < a) {
      FSCTL_TRY(insert_extent(c, s, a - s));
      ++pieces;
    }
    if (e > a + n) {
      FSCTL_TRY(insert_extent(c, a + n, e - a - n));
      ++pieces;
    }
    return update_extent_count(c, pieces - 1);
  }
  u64 s = a, e = a + n;
  s64 merged = 0;
  if (a > c.bg.start) {
    FSCTL_TRY_ASSIGN(auto left, item_at_or_before(c.t, c.root.ref(), Key{a - 1, KeyType::FREE_SPACE_EXTENT, ~0ULL}));
    if (left && left->type == KeyType::FREE_SPACE_EXTENT && left->objectid >= c.bg.start) {
      if (left->objectid + left->offset > a)
        return make_error(Errc::corrupt, "free space extent " + key_to_string(*left) + " overlaps a block being freed at " + std::to_string(a));
      if (left->objectid + left->offset == a) {
        s = left->objectid;
        FSCTL_TRY(delete_key(c, *left));
        ++merged;
      }
    }
  }
  if (e < c.bg.start + c.bg.length) {
    FSCTL_TRY_ASSIGN(auto right, item_at_or_after(c.t, c.root.ref(), Key{e, KeyType::FREE_SPACE_EXTENT, 0}));
    if (right && right->type == KeyType::FREE_SPACE_EXTENT && right->objectid == e) {
      e = right->objectid + right->offset;
      FSCTL_TRY(delete_key(c, *right));
      ++merged;
    }
  }
  FSCTL_TRY(insert_extent(c, s, e - s));
  return update_extent_count(c, 1 - merged);
}

// Bitmap form: is the sector at `addr` free? Outside the block group: no.
Result<bool> bitmap_bit(Ctx& c, u64 addr) {
  if (addr < c.bg.start || addr >= c.bg.start + c.bg.length) return false;
  FSCTL_TRY_ASSIGN(auto k, item_at_or_before(c.t, c.root.ref(), Key{addr, KeyType::FREE_SPACE_BITMAP, ~0ULL}));
  if (!k || k->type != KeyType::FREE_SPACE_BITMAP || addr >= k->objectid + k->offset) return false;
  FSCTL_TRY_ASSIGN(auto data, ctree::lookup_item(c.t, c.root.ref(), *k));
  u64 bit = (addr - k->objectid) / c.ss;
  return data && bit / 8 < data->size() && ((*data)[bit / 8] >> (bit % 8)) & 1;
}

Status bitmap_mark(Ctx& c, u64 a, u64 n, bool now_free) {
  FSCTL_TRY_ASSIGN(bool before, bitmap_bit(c, a - c.ss));
  FSCTL_TRY_ASSIGN(bool after, bitmap_bit(c, a + n));
  u64 pos = a;
  while (pos < a + n) {
    FSCTL_TRY_ASSIGN(auto k, item_at_or_before(c.t, c.root.ref(), Key{pos, KeyType::FREE_SPACE_BITMAP, ~0ULL}));
    if (!k || k->type != KeyType::FREE_SPACE_BITMAP || pos >= k->objectid + k->offset)
      return make_error(Errc::corrupt, "no free space bitmap covers " + std::to_string(pos) + " in block group " + std::to_string(c.bg.start));
    ctree::Path p;
    FSCTL_TRY(ctree::search_slot_for_write(c.t, c.root, *k, 0, p));
    auto bits = ctree::item_data_mut(c.t, p);
    u64 end = std::min(a + n, k->objectid + k->offset);
    for (u64 x = pos; x < end; x += c.ss) {
      u64 bit = (x - k->objectid) / c.ss;
      if (bit / 8 >= bits.size()) return make_error(Errc::corrupt, "free space bitmap " + key_to_string(*k) + " too short");
      bool was = (bits[bit / 8] >> (bit % 8)) & 1;
      if (was == now_free)
        return make_error(Errc::corrupt, "free space bitmap already marks " + std::to_string(x) + (now_free ? " free" : " used"));
      if (now_free)
        bits[bit / 8] = static_cast<u8>(bits[bit / 8] | (1u << (bit % 8)));
      else
        bits[bit / 8] = static_cast<u8>(bits[bit / 8] & ~(1u << (bit % 8)));
    }
    pos = end;
  }
  s64 delta;
  if (now_free)
    delta = before && after ? -1 : (!before && !after ? 1 : 0);
  else
    delta = before && after ? 1 : (!before && !after ? -1 : 0);
  return update_extent_count(c, delta);
}

}  // namespace

Status FreeSpaceUpdates::apply(Transaction& t) {
  // A block group created by this transaction gets its FREE_SPACE_INFO and
  // whole-group extent before its blocks are carved out of it.
  FSCTL_TRY(t.chunks().insert_pending(t));
  if (pending_.empty() && data_freed_.empty()) return {};
  FSCTL_TRY_ASSIGN(auto* root, t.root(FREE_SPACE_TREE_OBJECTID));
  u32 ns = t.nodesize();
  // Data block groups are not in the allocator: their spaces are made from
  // FsInfo's block group list for the updates and conversions below.
  std::map<u64, BlockGroupSpace> data_groups;
  auto group_of = [&](u64 logical) -> BlockGroupSpace* {
    if (BlockGroupSpace* g = t.allocator().group_of(logical)) return g;
    const fs::BlockGroup* bg = t.fs().block_group_of(logical);
    if (!bg) return nullptr;
    auto& g = data_groups[bg->start];
    g.start = bg->start;
    g.length = bg->length;
    g.flags = bg->flags;
    return &g;
  };
  // Runs of adjacent blocks going the same way in one block group are one
  // range update (a balance allocates and frees thousands of blocks in a
  // row). Each run is taken out of pending_ just before it is applied,
  // and a new block of the run is recorded as applied first: the tree
  // updates below allocate and free blocks themselves, and a block of this
  // transaction freed (or allocated again) meanwhile must find the state
  // it changes (test 094: a "used" op taken out of the queue all at once
  // and its block freed before the op was applied left the block marked
  // used for good).
  // Then the groups whose extent_count changed get their form checked,
  // once per transaction each; a conversion allocates and frees blocks
  // itself, whose updates go round again.
  std::set<u64> count_changed;
  for (;;) {
  while (!data_freed_.empty()) {
    auto [a, len] = *data_freed_.begin();
    data_freed_.erase(data_freed_.begin());
    BlockGroupSpace* bg = group_of(a);
    if (!bg || a + len > bg->start + bg->length)
      return make_error(Errc::corrupt, "data extent " + std::to_string(a) + " of " + std::to_string(len) + " bytes lies in no block group");
    FSCTL_TRY_ASSIGN(auto info, ctree::lookup_item(t, root->ref(), Key{bg->start, KeyType::FREE_SPACE_INFO, bg->length}));
    if (!info) return make_error(Errc::corrupt, "free space tree has no FREE_SPACE_INFO for block group " + std::to_string(bg->start));
    auto info_rec = decode_free_space_info(*info);
    if (!info_rec) return make_error(info_rec.error().context("block group " + std::to_string(bg->start)));
    Ctx c{t, *root, *bg, t.fs().sectorsize(), count_changed};
    if (info_rec->using_bitmaps())
      FSCTL_TRY(bitmap_mark(c, a, len, true));
    else
      FSCTL_TRY(extent_mark(c, a, len, true));
  }
  while (!pending_.empty()) {
    auto it = pending_.begin();
    u64 a = it->first;
    bool now_free = it->second;
    BlockGroupSpace* bg = t.allocator().group_of(a);
    if (!bg) return make_error(Errc::corrupt, "tree block " + std::to_string(a) + " lies in no metadata block group");
    u64 n = 0;
    while (it != pending_.end() && it->first == a + n && it->second == now_free && it->first + ns <= bg->start + bg->length) {
      if (!now_free && t.is_new(it->first)) applied_.insert(it->first);
      n += ns;
      it = pending_.erase(it);
    }
    FSCTL_TRY_ASSIGN(auto info, ctree::lookup_item(t, root->ref(), Key{bg->start, KeyType::FREE_SPACE_INFO, bg->length}));
    if (!info) return make_error(Errc::corrupt, "free space tree has no FREE_SPACE_INFO for block group " + std::to_string(bg->start));
    auto info_rec = decode_free_space_info(*info);
    if (!info_rec) return make_error(info_rec.error().context("block group " + std::to_string(bg->start)));
    bool bitmaps = info_rec->using_bitmaps();
    Ctx c{t, *root, *bg, t.fs().sectorsize(), count_changed};
    if (bitmaps)
      FSCTL_TRY(bitmap_mark(c, a, n, now_free));
    else
      FSCTL_TRY(extent_mark(c, a, n, now_free));
  }
  if (count_changed.empty()) break;
  auto groups = std::move(count_changed);
  count_changed.clear();
  for (u64 start : groups) {
    if (converted_.count(start)) continue;
    BlockGroupSpace* bg = group_of(start);
    if (!bg || bg->start != start) return make_error(Errc::corrupt, "block group " + std::to_string(start) + " vanished");
    Ctx c{t, *root, *bg, t.fs().sectorsize(), count_changed};
    FSCTL_TRY_ASSIGN(bool converted, convert_if_needed(c));
    if (converted) converted_.insert(start);
  }
  }
  return {};
}

}  // namespace fsctl::transaction
