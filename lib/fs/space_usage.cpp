// SPDX-License-Identifier: GPL-2.0-only
// Space per device and per type/profile (space_usage.h).
#include "lib/fs/space_usage.h"

#include <algorithm>

#include "lib/format/chunk_item.h"
#include "lib/format/dev_item.h"
#include "lib/volumes/raid_profiles.h"

namespace fsctl::fs {
using namespace fsctl::format;

namespace {

// Physical length of one stripe of `c`: the chunk length over its data
// stripes (stripes holding distinct data; copies and parity excluded).
Result<u64> stripe_length(const Chunk& c) {
  const volumes::RaidProfile* p = volumes::raid_profile(c.type);
  if (!p || c.num_stripes == 0)
    return make_error(Errc::corrupt, "chunk " + std::to_string(c.logical) + " has an unknown profile or no stripes");
  u64 data = volumes::data_stripes(*p, c.num_stripes);
  return c.length / std::max<u64>(data, 1);
}

struct GroupSpace {
  u64 used = 0, length = 0, physical = 0;
};

// Physical bytes of the chunks a balance could empty: least used first, a
// group goes while the used bytes of the emptied groups fit in the free
// space of the groups left.
u64 reclaimable(std::vector<GroupSpace> groups) {
  std::sort(groups.begin(), groups.end(), [](const GroupSpace& a, const GroupSpace& b) { return a.used < b.used; });
  u64 room = 0;
  for (const auto& g : groups) room += g.length - std::min(g.used, g.length);
  u64 moved = 0, out = 0;
  for (const auto& g : groups) {
    u64 own_free = g.length - std::min(g.used, g.length);
    if (moved + g.used > room - own_free) break;
    moved += g.used;
    room -= own_free;
    out += g.physical;
  }
  return out;
}

}  // namespace

Result<SpaceUsage> space_usage(const FsInfo& fs) {
  SpaceUsage u;
  std::map<u64, DeviceUsage> devs;
  for (const auto& [devid, disk] : fs.dev_items()) {
    DevItemRecord di = dev_item_from_disk(disk);
    devs[devid] = DeviceUsage{devid, di.total_bytes, 0};
  }
  std::map<u64, ProfileUsage> by_flags;
  std::map<u64, std::vector<GroupSpace>> groups;  // by flags
  for (const auto& bg : fs.block_groups()) {
    const Chunk* c = fs.chunk_map().find(bg.start);
    if (!c || c->logical != bg.start)
      return make_error(Errc::corrupt, "block group " + std::to_string(bg.start) + " has no chunk");
    FSCTL_TRY_ASSIGN(u64 stripe, stripe_length(*c));
    ProfileUsage& p = by_flags[bg.flags];
    p.flags = bg.flags;
    p.chunks++;
    p.size += bg.length;
    p.used += bg.used;
    u64 physical = 0;
    for (const auto& s : c->stripes) {
      p.physical[s.devid] += stripe;
      devs[s.devid].devid = s.devid;
      devs[s.devid].allocated += stripe;
      physical += stripe;
    }
    const volumes::RaidProfile* prof = volumes::raid_profile(bg.flags);
    u.used += bg.used * static_cast<u64>(prof ? prof->ncopies : 1);
    groups[bg.flags].push_back({bg.used, bg.length, physical});
  }
  for (auto& [flags, p] : by_flags) {
    if (!(flags & BLOCK_GROUP_DATA)) p.reclaimable = reclaimable(groups[flags]);
    u.profiles.push_back(p);
  }
  // Data first, then metadata, then system (btrfs filesystem usage's order).
  auto rank = [](u64 f) { return (f & BLOCK_GROUP_DATA) ? 0 : (f & BLOCK_GROUP_METADATA) ? 1 : 2; };
  std::stable_sort(u.profiles.begin(), u.profiles.end(),
                   [&](const ProfileUsage& a, const ProfileUsage& b) { return rank(a.flags) < rank(b.flags); });
  for (auto& [devid, d] : devs) {
    u.devices.push_back(d);
    u.total_bytes += d.total_bytes;
    u.allocated += d.allocated;
    u.unallocated += d.unallocated();
  }
  return u;
}

}  // namespace fsctl::fs
