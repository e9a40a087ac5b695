// SPDX-License-Identifier: GPL-2.0-only
// ChunkChanges (chunk_changes.h): new chunks and removal of empty block groups (kernel volumes.c
// btrfs_create_chunk / btrfs_chunk_alloc_add_chunk_item / btrfs_remove_chunk,
// block-group.c btrfs_create_pending_block_groups / btrfs_remove_block_group,
// free-space-tree.c add_block_group_free_space /
// remove_block_group_free_space). A new chunk changes memory at once (the
// allocator, FsInfo's chunk map) and its items are inserted at commit, from
// the top of the fixed point, never from inside a tree modification that
// happened to need space. DESIGN.md "Writing", invariants 1, 3, 4.
#include <algorithm>

#include "lib/ctree/search.h"
#include "lib/format/block_group_item.h"
#include "lib/format/chunk_item.h"
#include "lib/format/dev_extent.h"
#include "lib/format/dev_item.h"
#include "lib/format/free_space_info.h"
#include "lib/format/names.h"
#include "lib/format/super.h"
#include "lib/transaction/chunk_changes.h"
#include "lib/transaction/transaction.h"
#include "lib/volumes/chunk_map.h"

namespace fsctl::transaction {
using namespace fsctl::format;

namespace {

// Bytes of one sys_chunk_array entry: disk key + chunk item.
u64 sys_entry_size(const Chunk& c) { return sys_chunk_entry_size(c.stripes.size()); }

bool has_bg_tree(const fs::FsInfo& fs) { return fs.super().compat_ro_flags.get() & COMPAT_RO_BLOCK_GROUP_TREE; }

}  // namespace

Status ChunkChanges::load_dev_extents(Transaction& t) {
  dev_extents_.clear();
  auto dev = t.fs().find_root(DEV_TREE_OBJECTID);
  if (!dev) return make_error(Errc::corrupt, "root tree has no dev tree");
  return ctree::for_each_item(t, *dev, {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
    Key k = leaf.item_key(slot);
    if (k.type != KeyType::DEV_EXTENT) return ctree::Visit::next;
    auto de = decode_dev_extent(leaf.item_data(slot));
    if (!de) return make_error(de.error().context("dev tree leaf " + std::to_string(leaf.bytenr()) + ": " + key_to_string(k)));
    dev_extents_[k.objectid][k.offset] = de->length;
    return ctree::Visit::next;
  });
}

std::vector<volumes::DeviceSpace> ChunkChanges::device_spaces(const fs::FsInfo& fs) const {
  std::vector<volumes::DeviceSpace> out;
  for (auto& [devid, disk] : fs.dev_items()) {
    DevItemRecord di = dev_item_from_disk(disk);
    volumes::DeviceSpace d;
    d.devid = devid;
    d.total_bytes = di.total_bytes;
    d.uuid = di.uuid;
    if (auto it = dev_extents_.find(devid); it != dev_extents_.end())
      for (auto [physical, length] : it->second) d.add(physical, length);
    out.push_back(std::move(d));
  }
  // Stripes of chunks created by this transaction are taken; those of chunks
  // it removed stay taken until the commit (their DEV_EXTENTs are still in
  // the committed dev tree, which dev_extents_ holds).
  for (auto& n : new_chunks_)
    for (auto& s : n.chunk.stripes)
      for (auto& d : out)
        if (d.devid == s.devid) d.add(s.physical, n.stripe_size);
  return out;
}

u64 ChunkChanges::default_flags(const fs::FsInfo& fs, bool system) const {
  if (system && system_profile_) return *system_profile_;
  if (!system && metadata_profile_) return *metadata_profile_;
  // The profile most block groups of the kind use (the kernel takes the
  // profile from its space_info; a filesystem converted half-way has two).
  std::map<u64, u64> count;
  for (auto& bg : fs.block_groups()) {
    bool sys = bg.flags & BLOCK_GROUP_SYSTEM;
    if (sys != system || !(bg.flags & (BLOCK_GROUP_METADATA | BLOCK_GROUP_SYSTEM))) continue;
    count[bg.flags & (BLOCK_GROUP_TYPE_MASK | BLOCK_GROUP_PROFILE_MASK)]++;
  }
  u64 best = system ? BLOCK_GROUP_SYSTEM : BLOCK_GROUP_METADATA, n = 0;
  for (auto& [flags, c] : count)
    if (c > n) {
      best = flags;
      n = c;
    }
  return best;
}

Status ChunkChanges::check_no_conversion(const fs::FsInfo& fs, const char* what) const {
  // While a block group tree conversion runs, block group items live in two
  // trees by a rule of the converter (FORMAT.md section 1); a new or removed
  // item would have to follow it.
  if (fs.super().flags.get() & SUPER_FLAG_CHANGING_BG_TREE)
    return make_error(Errc::unsupported, std::string(what) + " during a block group tree conversion is not supported: finish the conversion first");
  return {};
}

void ChunkChanges::save_volume_state(const fs::FsInfo& fs) {
  if (!saved_volumes_) saved_volumes_ = fs.volume_state();
}

Result<u64> ChunkChanges::alloc_chunk(Transaction& t, u64 flags) {
  FSCTL_TRY(t.load_space());
  fs::FsInfo& fs = t.fs();
  FSCTL_TRY(check_no_conversion(fs, "allocating a chunk"));
  u64 type = flags & BLOCK_GROUP_TYPE_MASK;
  if ((type & BLOCK_GROUP_SYSTEM) && type != BLOCK_GROUP_SYSTEM)
    return make_error(Errc::invalid_argument, "chunk flags " + block_group_flags_to_string(flags) + ": SYSTEM goes with no other type");
  if (!(type & (BLOCK_GROUP_METADATA | BLOCK_GROUP_SYSTEM)))
    return make_error(type ? Errc::unsupported : Errc::invalid_argument,
                      "chunk flags " + block_group_flags_to_string(flags) + ": only METADATA and SYSTEM chunks are allocated by fsctl");
  if (flags & ~(BLOCK_GROUP_TYPE_MASK | BLOCK_GROUP_PROFILE_MASK))
    return make_error(Errc::invalid_argument, "chunk flags " + block_group_flags_to_string(flags) + " have unknown bits");
  FSCTL_TRY_ASSIGN(auto plan, volumes::plan_chunk(flags, device_spaces(fs), fs.sectorsize(), fs.nodesize()));
  Chunk& c = plan.chunk;
  // After the highest chunk end (kernel find_next_chunk), counting chunks
  // removed by this transaction: their logical range is not reused before
  // the commit.
  u64 logical = 0;
  for (auto& [start, ch] : fs.chunk_map().chunks()) logical = std::max(logical, start + ch.length);
  for (auto& r : removed_chunks_) logical = std::max(logical, r.logical + r.length);
  c.logical = logical;
  if (type & BLOCK_GROUP_SYSTEM) {
    // Every SYSTEM chunk must be in sys_chunk_array (the kernel bootstraps
    // the chunk tree from it; btrfs_add_system_chunk fails with EFBIG when
    // it is full).
    u64 size = fs.super().sys_chunk_array_size.get();
    for (auto& r : removed_chunks_)
      if (r.type & BLOCK_GROUP_SYSTEM) size -= sys_entry_size(r);
    for (auto& n : new_chunks_)
      if (n.chunk.type & BLOCK_GROUP_SYSTEM) size += sys_entry_size(n.chunk);
    if (size + sys_entry_size(c) > SYSTEM_CHUNK_ARRAY_SIZE)
      return make_error(Errc::nospc, "no room for another SYSTEM chunk in the superblock's sys_chunk_array (" + std::to_string(size) + " of " +
                                         std::to_string(SYSTEM_CHUNK_ARRAY_SIZE) + " bytes used)");
  }
  save_volume_state(fs);
  fs::BlockGroup bg{c.logical, c.length, 0, c.type, FIRST_CHUNK_TREE_OBJECTID, has_bg_tree(fs) ? BLOCK_GROUP_TREE_OBJECTID : EXTENT_TREE_OBJECTID};
  FSCTL_TRY(fs.add_chunk(c, bg));
  t.allocator().add_chunk(c);
  new_chunks_.push_back({c, plan.stripe_size, false});
  return c.logical;
}

Status ChunkChanges::add_dev_bytes_used(Transaction& t, u64 devid, s64 delta) {
  FSCTL_TRY_ASSIGN(auto* ct, t.root(CHUNK_TREE_OBJECTID));
  ctree::Path p;
  Key k{DEV_ITEMS_OBJECTID, KeyType::DEV_ITEM, devid};
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *ct, k, 0, p));
  if (!exact) return make_error(Errc::corrupt, "chunk tree has no DEV_ITEM of devid " + std::to_string(devid));
  auto d = ctree::item_data_mut(t, p);
  auto di = decode_dev_item(d);
  if (!di) return make_error(di.error().context("devid " + std::to_string(devid)));
  u64 used = di->bytes_used;
  if (delta < 0 && used < static_cast<u64>(-delta))
    return make_error(Errc::corrupt, "DEV_ITEM of devid " + std::to_string(devid) + " has bytes_used " + std::to_string(used) +
                                         ", less than the " + std::to_string(-delta) + " bytes of dev extents being removed");
  di->bytes_used = static_cast<u64>(static_cast<s64>(used) + delta);
  FSCTL_TRY(store_dev_item(d, *di));
  dev_items_changed_[devid] = *di;
  return {};
}

Status ChunkChanges::insert_chunk_items(Transaction& t, const Chunk& c, u64 stripe_size) {
  // Chunk tree: the chunk item and the devices' bytes_used.
  FSCTL_TRY_ASSIGN(auto* ct, t.root(CHUNK_TREE_OBJECTID));
  FSCTL_TRY(ctree::insert_item(t, *ct, Key{FIRST_CHUNK_TREE_OBJECTID, KeyType::CHUNK_ITEM, c.logical}, encode_chunk(c)));
  for (auto& s : c.stripes) FSCTL_TRY(add_dev_bytes_used(t, s.devid, static_cast<s64>(stripe_size)));
  // Dev tree: one DEV_EXTENT per stripe (kernel insert_dev_extent).
  FSCTL_TRY_ASSIGN(auto* dt, t.root(DEV_TREE_OBJECTID));
  for (auto& s : c.stripes) {
    DevExtentRecord de;
    de.chunk_tree = CHUNK_TREE_OBJECTID;
    de.chunk_objectid = FIRST_CHUNK_TREE_OBJECTID;
    de.chunk_offset = c.logical;
    de.length = stripe_size;
    de.chunk_tree_uuid = t.fs().identity().chunk_tree_uuid;
    FSCTL_TRY(ctree::insert_item(t, *dt, Key{s.devid, KeyType::DEV_EXTENT, s.physical}, encode_dev_extent(de)));
  }
  // Block group item (kernel insert_block_group_item): used 0 now; the
  // blocks already allocated from the group arrive through bg_delta_.
  BlockGroupRecord bi{.used = 0, .chunk_objectid = FIRST_CHUNK_TREE_OBJECTID, .flags = c.type};
  FSCTL_TRY_ASSIGN(auto* bt, t.root(has_bg_tree(t.fs()) ? BLOCK_GROUP_TREE_OBJECTID : EXTENT_TREE_OBJECTID));
  FSCTL_TRY(ctree::insert_item(t, *bt, Key{c.logical, KeyType::BLOCK_GROUP_ITEM, c.length}, encode_block_group_item(bi)));
  // Free space tree: the info item and one extent over the whole group; the
  // blocks already allocated from it arrive through pending_fst_.
  FreeSpaceInfoRecord info{.extent_count = 1, .flags = 0};
  FSCTL_TRY_ASSIGN(auto* ft, t.root(FREE_SPACE_TREE_OBJECTID));
  FSCTL_TRY(ctree::insert_item(t, *ft, Key{c.logical, KeyType::FREE_SPACE_INFO, c.length}, encode_free_space_info(info)));
  FSCTL_TRY(ctree::insert_item(t, *ft, Key{c.logical, KeyType::FREE_SPACE_EXTENT, c.length}, {}));
  return {};
}

Status ChunkChanges::insert_pending(Transaction& t) {
  // Index loop: inserting may allocate blocks, and a full filesystem then
  // appends another chunk, inserted by a later iteration.
  for (std::size_t i = 0; i < new_chunks_.size(); ++i) {
    if (new_chunks_[i].inserted) continue;
    new_chunks_[i].inserted = true;
    Chunk c = new_chunks_[i].chunk;
    u64 stripe_size = new_chunks_[i].stripe_size;
    if (auto r = insert_chunk_items(t, c, stripe_size); !r)
      return make_error(r.error().context("inserting the items of new chunk " + std::to_string(c.logical)));
  }
  return {};
}

Status ChunkChanges::remove_block_group(Transaction& t, u64 start) {
  FSCTL_TRY(t.load_space());
  fs::FsInfo& fs = t.fs();
  FSCTL_TRY(check_no_conversion(fs, "removing a block group"));
  std::string what = "block group " + std::to_string(start);
  const fs::BlockGroup* found = fs.block_group_of(start);
  if (!found || found->start != start) return make_error(Errc::invalid_argument, "no block group starts at logical " + std::to_string(start));
  fs::BlockGroup bg = *found;
  for (auto& n : new_chunks_)
    if (n.chunk.logical == start) return make_error(Errc::invalid_argument, what + " was created by this transaction");
  if (t.usage().touched(start))
    return make_error(Errc::invalid_argument, what + ": this transaction allocated or freed space in it");
  const Chunk* cp = fs.chunk_map().find(start);
  if (!cp || cp->logical != start) return make_error(Errc::corrupt, what + " has no chunk");
  Chunk chunk = *cp;

  // Empty: its committed item says used 0 and the extent tree has nothing in it.
  FSCTL_TRY_ASSIGN(auto* bt, t.root(bg.item_tree));
  Key bg_key{start, KeyType::BLOCK_GROUP_ITEM, bg.length};
  FSCTL_TRY_ASSIGN(auto item, ctree::lookup_item(t, bt->ref(), bg_key));
  if (!item) return make_error(Errc::corrupt, what + " has no BLOCK_GROUP_ITEM in the " + tree_name(bg.item_tree) + " tree");
  auto bgi = decode_block_group_item(*item);
  if (!bgi) return make_error(bgi.error().context(what + " in the " + tree_name(bg.item_tree) + " tree"));
  u64 used = bgi->used;
  if (used != 0) return make_error(Errc::invalid_argument, what + " is not empty: used " + std::to_string(used) + " bytes");
  FSCTL_TRY_ASSIGN(auto* ext, t.root(EXTENT_TREE_OBJECTID));
  std::optional<Key> live;
  FSCTL_TRY(ctree::for_each_item(t, ext->ref(), {{start, 0, 0}, {start + bg.length - 1, 0xff, ~0ULL}},
                                 [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
                                   Key k = leaf.item_key(slot);
                                   if (k.type != KeyType::EXTENT_ITEM && k.type != KeyType::METADATA_ITEM) return ctree::Visit::next;
                                   live = k;
                                   return ctree::Visit::stop;
                                 }));
  if (live) return make_error(Errc::invalid_argument, what + " is not empty: the extent tree has " + key_to_string(*live));

  // Out of the allocator first: the tree changes below allocate blocks.
  t.allocator().remove_group(start);
  save_volume_state(fs);
  removed_chunks_.push_back(chunk);

  // Block group item.
  {
    ctree::Path p;
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *bt, bg_key, 0, p));
    if (!exact) return make_error(Errc::corrupt, what + ": BLOCK_GROUP_ITEM vanished");
    FSCTL_TRY(ctree::delete_item(t, *bt, p));
  }
  // Free space tree: the info item and every extent or bitmap of the range.
  FSCTL_TRY_ASSIGN(auto* ft, t.root(FREE_SPACE_TREE_OBJECTID));
  for (;;) {
    ctree::Path p;
    FSCTL_TRY(ctree::search_slot(t, ft->ref(), Key{start, KeyType::FREE_SPACE_INFO, 0}, p));
    FSCTL_TRY_ASSIGN(bool more, ctree::normalize(t, p));
    if (!more) break;
    Key k = p.key();
    if (k.objectid >= start + bg.length) break;
    if (k.type != KeyType::FREE_SPACE_INFO && k.type != KeyType::FREE_SPACE_EXTENT && k.type != KeyType::FREE_SPACE_BITMAP)
      return make_error(Errc::corrupt, "free space tree item " + key_to_string(k) + " in " + what + " has an unexpected type");
    p.release();
    ctree::Path w;
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *ft, k, 0, w));
    if (!exact) return make_error(Errc::corrupt, "free space item " + key_to_string(k) + " vanished");
    FSCTL_TRY(ctree::delete_item(t, *ft, w));
  }
  // Chunk tree: the chunk item.
  FSCTL_TRY_ASSIGN(auto* ct, t.root(CHUNK_TREE_OBJECTID));
  {
    ctree::Path p;
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *ct, Key{FIRST_CHUNK_TREE_OBJECTID, KeyType::CHUNK_ITEM, start}, 0, p));
    if (!exact) return make_error(Errc::corrupt, what + ": the chunk tree has no CHUNK_ITEM");
    FSCTL_TRY(ctree::delete_item(t, *ct, p));
  }
  // Dev tree: the stripes' dev extents, and the devices' bytes_used.
  FSCTL_TRY_ASSIGN(auto* dt, t.root(DEV_TREE_OBJECTID));
  for (auto& s : chunk.stripes) {
    Key k{s.devid, KeyType::DEV_EXTENT, s.physical};
    ctree::Path p;
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *dt, k, 0, p));
    if (!exact) return make_error(Errc::corrupt, what + ": the dev tree has no DEV_EXTENT " + key_to_string(k));
    auto de = decode_dev_extent(p.item_data());
    if (!de) return make_error(de.error().context(key_to_string(k)));
    u64 chunk_offset = de->chunk_offset, length = de->length;
    if (chunk_offset != start)
      return make_error(Errc::corrupt, "DEV_EXTENT " + key_to_string(k) + " has chunk_offset " + std::to_string(chunk_offset) + " expect " + std::to_string(start));
    FSCTL_TRY(ctree::delete_item(t, *dt, p));
    FSCTL_TRY(add_dev_bytes_used(t, s.devid, -static_cast<s64>(length)));
  }
  fs.remove_chunk(start);
  return {};
}

Result<SuperBlock> ChunkChanges::updated_sys_chunk_array(const SuperBlock& sb) const {
  std::set<u64> removed;
  for (auto& r : removed_chunks_)
    if (r.type & BLOCK_GROUP_SYSTEM) removed.insert(r.logical);
  std::vector<const Chunk*> added;
  for (auto& n : new_chunks_)
    if (n.chunk.type & BLOCK_GROUP_SYSTEM) added.push_back(&n.chunk);
  if (removed.empty() && added.empty()) return sb;
  // Keep the entries of the chunks that stay (their bytes as they are),
  // then append the new ones (kernel btrfs_add_system_chunk /
  // btrfs_del_sys_chunk).
  std::vector<u8> out;
  u32 size = sb.sys_chunk_array_size.get();
  std::span<const u8> array(sb.sys_chunk_array);
  FSCTL_TRY_ASSIGN(auto entries, decode_sys_chunk_array(array, size));
  std::size_t pos = 0;
  for (auto& c : entries) {
    std::size_t len = sys_entry_size(c);
    if (!removed.count(c.logical)) {
      auto entry = array.subspan(pos, len);
      out.insert(out.end(), entry.begin(), entry.end());
    }
    pos += len;
  }
  for (const Chunk* c : added) {
    auto entry = encode_sys_chunk_entry(*c);
    out.insert(out.end(), entry.begin(), entry.end());
  }
  SuperBlock n = sb;
  FSCTL_TRY(store_sys_chunk_array(n, out));
  return n;
}

std::vector<u64> ChunkChanges::planned_lengths(const fs::FsInfo& fs, bool system, u64 bytes) const {
  std::vector<u64> out;
  if (!alloc_allowed_ || !check_no_conversion(fs, "")) return out;
  u64 flags = default_flags(fs, system);
  auto devs = device_spaces(fs);
  u64 held = 0;
  while (held < bytes && out.size() < 65536) {
    auto plan = volumes::plan_chunk(flags, devs, fs.sectorsize(), fs.nodesize());
    if (!plan) break;
    out.push_back(plan->chunk.length);
    held += plan->chunk.length;
    volumes::take_plan(*plan, devs);
  }
  return out;
}

u64 ChunkChanges::allocatable_metadata_bytes(const fs::FsInfo& fs) const {
  if (!alloc_allowed_ || !check_no_conversion(fs, "")) return 0;
  u32 ns = fs.nodesize();
  u64 flags = default_flags(fs, false);
  auto devs = device_spaces(fs);
  // What inserting one chunk's items may allocate in metadata trees (dev
  // tree, block group item's tree, free space tree: a copied path and a
  // split each), taken off every chunk.
  constexpr u64 ITEM_BLOCKS = 32;
  u64 total = 0;
  for (int i = 0; i < 65536; ++i) {
    auto plan = volumes::plan_chunk(flags, devs, fs.sectorsize(), ns);
    if (!plan) break;
    u64 excluded = 0;
    for (auto [a, b] : volumes::super_mirror_ranges(plan->chunk)) excluded += b - a;
    u64 usable = plan->chunk.length > excluded ? (plan->chunk.length - excluded) / ns * ns : 0;
    total += usable > ITEM_BLOCKS * ns ? usable - ITEM_BLOCKS * ns : 0;
    volumes::take_plan(*plan, devs);
    if (total >= (1ULL << 60)) break;
  }
  return total;
}

bool ChunkChanges::pending() const {
  return std::any_of(new_chunks_.begin(), new_chunks_.end(), [](const NewChunk& n) { return !n.inserted; });
}

u64 ChunkChanges::incompat_needed() const {
  u64 bits = 0;
  for (auto& n : new_chunks_)
    if (n.chunk.type & (BLOCK_GROUP_RAID1C3 | BLOCK_GROUP_RAID1C4)) bits |= INCOMPAT_RAID1C34;
  return bits;
}

void ChunkChanges::publish_dev_items(fs::FsInfo& fs) const {
  for (auto& [devid, di] : dev_items_changed_) fs.set_dev_item(dev_item_to_disk(di));
}

void ChunkChanges::restore(fs::FsInfo& fs) {
  if (saved_volumes_) fs.restore_volume_state(std::move(*saved_volumes_));
  saved_volumes_.reset();
}

}  // namespace fsctl::transaction
