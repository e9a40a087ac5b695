// SPDX-License-Identifier: GPL-2.0-only
// Chunk mapping for SINGLE, DUP, RAID0, RAID1, RAID1C3, RAID1C4 and RAID10.
#include "lib/volumes/chunk_map.h"

#include <algorithm>

#include "lib/format/names.h"
#include "lib/format/super.h"
#include "lib/volumes/raid_profiles.h"

namespace fsctl::volumes {
using namespace fsctl::format;

static bool same_chunk(const Chunk& a, const Chunk& b) {
  if (a.logical != b.logical || a.length != b.length || a.type != b.type || a.num_stripes != b.num_stripes) return false;
  for (std::size_t i = 0; i < a.stripes.size(); ++i)
    if (a.stripes[i].devid != b.stripes[i].devid || a.stripes[i].physical != b.stripes[i].physical) return false;
  return true;
}

std::vector<std::pair<u64, u64>> super_mirror_ranges(const Chunk& chunk) {
  std::vector<std::pair<u64, u64>> out;
  const RaidProfile* prof = raid_profile(chunk.type);
  bool striped = prof && prof->striped;
  u64 stripe_size = chunk.length;
  if (striped) {
    u64 data_stripes = prof->flag == BLOCK_GROUP_RAID10 ? chunk.num_stripes / std::max<u16>(chunk.sub_stripes, 1) : chunk.num_stripes;
    stripe_size = chunk.length / std::max<u64>(data_stripes, 1);
  }
  for (int m = 0; m < SUPER_MIRROR_MAX; ++m) {
    u64 phys = super_mirror_offset(m);
    for (auto& st : chunk.stripes) {
      if (phys < st.physical || phys >= st.physical + stripe_size) continue;
      if (striped) {
        out.emplace_back(chunk.logical, chunk.logical + chunk.length);
        continue;
      }
      u64 a = (chunk.logical + (phys - st.physical)) / STRIPE_LEN * STRIPE_LEN;
      out.emplace_back(a, a + STRIPE_LEN);
    }
  }
  return out;
}

Status ChunkMap::add(const Chunk& chunk) {
  auto it = chunks_.lower_bound(chunk.logical);
  if (it != chunks_.end() && it->first == chunk.logical && same_chunk(it->second, chunk)) return {};
  auto overlaps = [&](const Chunk& o) { return chunk.logical < o.logical + o.length && o.logical < chunk.logical + chunk.length; };
  if (it != chunks_.end() && overlaps(it->second))
    return make_error(Errc::corrupt, "chunk at logical " + std::to_string(chunk.logical) + " overlaps chunk at logical " +
                                         std::to_string(it->first));
  if (it != chunks_.begin() && overlaps(std::prev(it)->second))
    return make_error(Errc::corrupt, "chunk at logical " + std::to_string(chunk.logical) + " overlaps chunk at logical " +
                                         std::to_string(std::prev(it)->first));
  chunks_.emplace(chunk.logical, chunk);
  return {};
}

const Chunk* ChunkMap::find(u64 logical) const {
  auto it = chunks_.upper_bound(logical);
  if (it == chunks_.begin()) return nullptr;
  --it;
  if (logical - it->first < it->second.length) return &it->second;
  return nullptr;
}

Result<std::vector<PhysicalRange>> ChunkMap::map(u64 logical, u64 len) const {
  const Chunk* c = find(logical);
  if (!c) return make_error(Errc::not_found, "logical " + std::to_string(logical) + " is not mapped by any chunk");
  u64 off = logical - c->logical;
  if (len > c->length - off)
    return make_error(Errc::corrupt, "logical range " + std::to_string(logical) + "+" + std::to_string(len) +
                                         " crosses the end of chunk " + std::to_string(c->logical));
  const RaidProfile* prof = raid_profile(c->type);
  if (!prof || !prof->readable)
    return make_error(Errc::unsupported, "unsupported profile " + profile_name(c->type) + " of chunk at logical " +
                                             std::to_string(c->logical));
  std::vector<PhysicalRange> out;
  if (!prof->striped) {
    for (auto& s : c->stripes) out.push_back({s.devid, s.physical + off});
    return out;
  }
  u64 stripe_nr = off / c->stripe_len;
  u64 stripe_off = off % c->stripe_len;
  if (len > c->stripe_len - stripe_off)
    return make_error(Errc::corrupt, "logical range " + std::to_string(logical) + "+" + std::to_string(len) +
                                         " crosses a stripe boundary");
  u64 n = c->num_stripes;
  if (prof->flag == BLOCK_GROUP_RAID0) {
    u64 idx = stripe_nr % n;
    u64 row = stripe_nr / n;
    out.push_back({c->stripes[idx].devid, c->stripes[idx].physical + stripe_off + row * c->stripe_len});
    return out;
  }
  // RAID10: groups of sub_stripes mirrors, striped across n/sub_stripes groups.
  u64 sub = c->sub_stripes ? c->sub_stripes : 2;
  u64 factor = n / sub;
  u64 idx = (stripe_nr % factor) * sub;
  u64 row = stripe_nr / factor;
  for (u64 i = 0; i < sub; ++i)
    out.push_back({c->stripes[idx + i].devid, c->stripes[idx + i].physical + stripe_off + row * c->stripe_len});
  return out;
}

}  // namespace fsctl::volumes
