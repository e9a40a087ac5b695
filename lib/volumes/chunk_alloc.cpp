// SPDX-License-Identifier: GPL-2.0-only
// Chunk allocation policy (kernel volumes.c btrfs_create_chunk with the
// regular policy; the numbers are the kernel's, read from its source, see
// chunk_alloc.h). Written from those facts, not from the kernel's code.
#include "lib/volumes/chunk_alloc.h"

#include <algorithm>
#include <optional>

#include "lib/format/items.h"
#include "lib/format/names.h"
#include "lib/format/super.h"
#include "lib/volumes/raid_profiles.h"

namespace fsctl::volumes {
using namespace fsctl::format;

namespace {

// Calls visit(start, length) for every unallocated range of `d` at or after
// DEV_EXTENT_SEARCH_START and below total_bytes, in physical order.
template <class F>
void for_each_hole(const DeviceSpace& d, F&& visit) {
  u64 cursor = DEV_EXTENT_SEARCH_START;
  for (auto& [start, len] : d.allocated) {
    if (start >= d.total_bytes) break;
    if (start > cursor) visit(cursor, start - cursor);
    cursor = std::max(cursor, start + len);
  }
  if (cursor < d.total_bytes) visit(cursor, d.total_bytes - cursor);
}

struct DeviceChoice {
  const DeviceSpace* dev;
  u64 offset;       // physical start of the chosen hole
  u64 max_avail;    // usable bytes there (at most what was wanted)
  u64 total_avail;  // unallocated bytes of the device
};

}  // namespace

void DeviceSpace::add(u64 start, u64 len) {
  u64 end = start + len;
  auto it = allocated.upper_bound(start);
  if (it != allocated.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second >= start) {
      start = prev->first;
      end = std::max(end, prev->first + prev->second);
      it = allocated.erase(prev);
    }
  }
  while (it != allocated.end() && it->first <= end) {
    end = std::max(end, it->first + it->second);
    it = allocated.erase(it);
  }
  allocated.emplace(start, end - start);
}

u64 DeviceSpace::used_bytes() const {
  u64 used = 0, cursor = 0;
  for (auto& [start, len] : allocated) {
    u64 s = std::max(start, cursor), e = start + len;
    if (e > s) used += e - s;
    cursor = std::max(cursor, e);
  }
  return used;
}

Result<ChunkPlan> plan_chunk(u64 flags, const std::vector<DeviceSpace>& devs, u32 sectorsize, u32 nodesize) {
  u64 type = flags & BLOCK_GROUP_TYPE_MASK;
  u64 profile = flags & BLOCK_GROUP_PROFILE_MASK;
  if (!type) return make_error(Errc::invalid_argument, "chunk flags " + block_group_flags_to_string(flags) + " have no type bit");
  if (profile & (profile - 1)) return make_error(Errc::invalid_argument, "chunk flags " + block_group_flags_to_string(flags) + " have several profile bits");
  const RaidProfile* prof = raid_profile(flags);
  if (!prof || prof->nparity) return make_error(Errc::unsupported, "allocating " + profile_name(flags) + " chunks is not supported");

  u64 total_rw = 0;
  for (auto& d : devs) total_rw += d.total_bytes;
  // space-info.c calc_chunk_size and init_alloc_chunk_ctl_policy_regular.
  u64 chunk_size = (type & BLOCK_GROUP_DATA) ? 10 * GiB : (type & BLOCK_GROUP_SYSTEM) ? 32 * MiB : total_rw > 50 * GiB ? GiB : 256 * MiB;
  u64 max_stripe = std::min(chunk_size, GiB);
  u64 max_chunk = std::min(total_rw / 10, chunk_size);  // 10% of the writable bytes (kernel mult_perc)
  u64 dev_stripes = static_cast<u64>(prof->dev_stripes);
  // BTRFS_MAX_DEVS (a chunk item must fit a leaf) and BTRFS_MAX_DEVS_SYS_CHUNK
  // (two keys and chunks must fit sys_chunk_array).
  u64 max_devs = (leaf_data_size(nodesize) - sizeof(Item) - sizeof(ChunkHeader) - sizeof(Stripe)) / sizeof(Stripe) + 1;
  u64 devs_max = prof->devs_max ? static_cast<u64>(prof->devs_max) : max_devs;
  if (type & BLOCK_GROUP_SYSTEM)
    devs_max = std::min<u64>(devs_max, (SYSTEM_CHUNK_ARRAY_SIZE - 2 * sizeof(DiskKey) - 2 * (sizeof(ChunkHeader) + sizeof(Stripe))) / sizeof(Stripe) + 1);
  u64 dev_extent_min = STRIPE_LEN * dev_stripes;
  u64 want = max_stripe * dev_stripes;

  // gather_device_info: the hole each device offers.
  std::vector<DeviceChoice> choices;
  for (auto& d : devs) {
    u64 used = d.used_bytes();
    u64 total_avail = d.total_bytes > used ? d.total_bytes - used : 0;
    if (total_avail < dev_extent_min) continue;
    std::optional<std::pair<u64, u64>> first_fit, largest;
    for_each_hole(d, [&](u64 start, u64 len) {
      if (!first_fit && len >= want) first_fit = std::make_pair(start, want);
      if (!largest || len > largest->second) largest = std::make_pair(start, len);
    });
    auto hole = first_fit ? first_fit : largest;
    if (!hole || hole->second < dev_extent_min) continue;
    choices.push_back({&d, hole->first, hole->second, total_avail});
  }
  std::stable_sort(choices.begin(), choices.end(), [](const DeviceChoice& a, const DeviceChoice& b) {
    if (a.max_avail != b.max_avail) return a.max_avail > b.max_avail;
    if (a.total_avail != b.total_avail) return a.total_avail > b.total_avail;
    return a.dev->devid < b.dev->devid;
  });

  // decide_stripe_size.
  u64 ndevs = choices.size() / static_cast<u64>(prof->devs_increment) * static_cast<u64>(prof->devs_increment);
  if (ndevs < static_cast<u64>(prof->devs_min))
    return make_error(Errc::nospc, "no unallocated space for a " + block_group_flags_to_string(flags) + " chunk: " +
                                       std::to_string(choices.size()) + " device(s) with a free hole of at least " +
                                       std::to_string(dev_extent_min) + " bytes, the profile needs " + std::to_string(prof->devs_min));
  ndevs = std::min(ndevs, devs_max);
  u64 stripe = choices[ndevs - 1].max_avail / dev_stripes;
  u64 num_stripes = ndevs * dev_stripes;
  u64 data_stripes = volumes::data_stripes(*prof, num_stripes);
  if (stripe * data_stripes > max_chunk) {
    u64 per = max_chunk / data_stripes;
    stripe = std::min((per + 16 * MiB - 1) / (16 * MiB) * (16 * MiB), stripe);
  }
  stripe = std::min(stripe, GiB);
  stripe = stripe / STRIPE_LEN * STRIPE_LEN;
  if (stripe == 0) return make_error(Errc::nospc, "no unallocated space for a " + block_group_flags_to_string(flags) + " chunk");

  ChunkPlan plan;
  plan.stripe_size = stripe;
  Chunk& c = plan.chunk;
  c.length = stripe * data_stripes;
  c.owner = EXTENT_TREE_OBJECTID;
  c.stripe_len = STRIPE_LEN;
  c.type = type | profile;
  c.io_align = c.io_width = static_cast<u32>(STRIPE_LEN);
  c.sector_size = sectorsize;
  c.num_stripes = static_cast<u16>(num_stripes);
  c.sub_stripes = static_cast<u16>(prof->sub_stripes);
  for (u64 i = 0; i < ndevs; ++i)
    for (u64 j = 0; j < dev_stripes; ++j) {
      ChunkStripe s;
      s.devid = choices[i].dev->devid;
      s.physical = choices[i].offset + j * stripe;
      s.dev_uuid = choices[i].dev->uuid;
      c.stripes.push_back(s);
    }
  return plan;
}

void take_plan(const ChunkPlan& plan, std::vector<DeviceSpace>& devs) {
  for (auto& s : plan.chunk.stripes)
    for (auto& d : devs)
      if (d.devid == s.devid) d.add(s.physical, plan.stripe_size);
}

}  // namespace fsctl::volumes
