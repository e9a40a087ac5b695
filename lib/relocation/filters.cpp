// SPDX-License-Identifier: GPL-2.0-only
#include "lib/relocation/filters.h"

#include <charconv>
#include <vector>

#include "lib/format/items.h"
#include "lib/volumes/raid_profiles.h"

namespace fsctl::relocation {
using namespace fsctl::format;

std::optional<u64> profile_from_name(const std::string& name) {
  static const std::pair<const char*, u64> table[] = {
      {"single", 0},
      {"dup", BLOCK_GROUP_DUP},
      {"raid0", BLOCK_GROUP_RAID0},
      {"raid1", BLOCK_GROUP_RAID1},
      {"raid1c3", BLOCK_GROUP_RAID1C3},
      {"raid1c4", BLOCK_GROUP_RAID1C4},
      {"raid10", BLOCK_GROUP_RAID10},
      {"raid5", BLOCK_GROUP_RAID5},
      {"raid6", BLOCK_GROUP_RAID6},
  };
  for (auto& [n, f] : table)
    if (name == n) return f;
  return std::nullopt;
}

namespace {

Result<u64> parse_u64(const std::string& filter, const std::string& s) {
  u64 v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size())
    return make_error(Errc::invalid_argument, "balance filter " + filter + ": \"" + s + "\" is not a number");
  return v;
}

// "A..B", "A..", "..B" or "N" (then `single_is_max` says whether N is the
// upper bound or an exact value).
Status parse_range(const std::string& filter, const std::string& v, std::optional<u64>& lo, std::optional<u64>& hi,
                   bool single_is_max) {
  auto dots = v.find("..");
  if (dots == std::string::npos) {
    FSCTL_TRY_ASSIGN(u64 n, parse_u64(filter, v));
    if (!single_is_max) lo = n;
    hi = n;
    return {};
  }
  std::string a = v.substr(0, dots), b = v.substr(dots + 2);
  if (a.empty() && b.empty()) return make_error(Errc::invalid_argument, "balance filter " + filter + ": empty range \"..\"");
  if (!a.empty()) {
    FSCTL_TRY_ASSIGN(u64 x, parse_u64(filter, a));
    lo = x;
  }
  if (!b.empty()) {
    FSCTL_TRY_ASSIGN(u64 y, parse_u64(filter, b));
    hi = y;
  }
  if (lo && hi && *lo > *hi)
    return make_error(Errc::invalid_argument, "balance filter " + filter + ": range " + v + " ends before it starts");
  return {};
}

}  // namespace

Result<BalanceFilters> BalanceFilters::parse(const std::string& text) {
  BalanceFilters f;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? text.size() : comma + 1;
    if (item.empty()) continue;
    std::size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    auto need_value = [&]() -> Status {
      if (value.empty()) return make_error(Errc::invalid_argument, "balance filter " + name + " needs a value (" + name + "=...)");
      return {};
    };
    if (name == "soft") {
      f.soft = true;
    } else if (name == "usage") {
      FSCTL_TRY(need_value());
      FSCTL_TRY(parse_range(name, value, f.usage_min, f.usage_max, true));
      if ((f.usage_max && *f.usage_max > 100) || (f.usage_min && *f.usage_min > 100))
        return make_error(Errc::invalid_argument, "balance filter usage: percentages go up to 100, got " + value);
    } else if (name == "limit") {
      FSCTL_TRY(need_value());
      FSCTL_TRY(parse_range(name, value, f.limit_min, f.limit_max, true));
    } else if (name == "devid") {
      FSCTL_TRY(need_value());
      FSCTL_TRY_ASSIGN(u64 d, parse_u64(name, value));
      if (d == 0) return make_error(Errc::invalid_argument, "balance filter devid: device ids start at 1");
      f.devid = d;
    } else if (name == "drange") {
      FSCTL_TRY(need_value());
      FSCTL_TRY(parse_range(name, value, f.drange_start, f.drange_end, false));
    } else if (name == "vrange") {
      FSCTL_TRY(need_value());
      FSCTL_TRY(parse_range(name, value, f.vrange_start, f.vrange_end, false));
    } else if (name == "stripes") {
      FSCTL_TRY(need_value());
      FSCTL_TRY(parse_range(name, value, f.stripes_min, f.stripes_max, false));
    } else if (name == "profiles") {
      FSCTL_TRY(need_value());
      std::size_t p = 0;
      while (p <= value.size()) {
        std::size_t bar = value.find('|', p);
        std::string one = value.substr(p, bar == std::string::npos ? std::string::npos : bar - p);
        auto prof = profile_from_name(one);
        if (!prof) return make_error(Errc::invalid_argument, "balance filter profiles: unknown profile \"" + one + "\"");
        f.profiles |= *prof ? *prof : PROFILE_SINGLE;
        if (bar == std::string::npos) break;
        p = bar + 1;
      }
      f.has_profiles = true;
    } else if (name == "convert") {
      FSCTL_TRY(need_value());
      auto prof = profile_from_name(value);
      if (!prof) return make_error(Errc::invalid_argument, "balance filter convert: unknown profile \"" + value + "\"");
      f.convert = *prof;
    } else {
      return make_error(Errc::invalid_argument, "unknown balance filter \"" + name + "\" (known: usage, limit, devid, drange, vrange, stripes, profiles, convert, soft)");
    }
  }
  if (f.soft && !f.convert) return make_error(Errc::invalid_argument, "balance filter soft needs convert=PROFILE");
  if ((f.drange_start || f.drange_end) && !f.devid)
    return make_error(Errc::invalid_argument, "balance filter drange needs devid=N (a physical range is on one device)");
  return f;
}

bool BalanceFilters::matches(const Chunk& chunk, u64 used) const {
  u64 profile = chunk.type & BLOCK_GROUP_PROFILE_MASK;
  if (has_profiles && !((profile ? profile : PROFILE_SINGLE) & profiles)) return false;
  if (usage_max || usage_min) {
    // Kernel chunk_usage_filter / chunk_usage_range_filter: relocate when
    // min% <= used < max%, where 0% as the upper bound means "empty" (< 1
    // byte) and percentages are of the block group's length.
    auto perc = [&](u64 pct) { return chunk.length / 100 * pct + chunk.length % 100 * pct / 100; };
    u64 lo = usage_min ? perc(*usage_min) : 0;
    u64 hi = !usage_max ? chunk.length : *usage_max == 0 ? 1 : perc(*usage_max);
    if (used < lo || used >= hi) return false;
  }
  if (devid) {
    bool on = false;
    // Kernel chunk_drange_filter: the stripe's physical extent on `devid`
    // (chunk length / data stripes) overlaps [start, end).
    const volumes::RaidProfile* prof = volumes::raid_profile(chunk.type);
    u64 factor = 1;
    if (prof && prof->striped)
      factor = prof->flag == BLOCK_GROUP_RAID10 ? chunk.num_stripes / std::max<u16>(chunk.sub_stripes, 1) : chunk.num_stripes;
    if (prof && (prof->flag == BLOCK_GROUP_RAID5)) factor = chunk.num_stripes - 1u;
    if (prof && (prof->flag == BLOCK_GROUP_RAID6)) factor = chunk.num_stripes - 2u;
    u64 stripe_len = chunk.length / std::max<u64>(factor, 1);
    for (auto& s : chunk.stripes) {
      if (s.devid != *devid) continue;
      if (drange_start || drange_end) {
        u64 a = drange_start.value_or(0), b = drange_end.value_or(~0ULL);
        if (s.physical < b && s.physical + stripe_len > a) on = true;
      } else {
        on = true;
      }
    }
    if (!on) return false;
  }
  if (vrange_start || vrange_end) {
    u64 a = vrange_start.value_or(0), b = vrange_end.value_or(~0ULL);
    if (!(chunk.logical < b && chunk.logical + chunk.length > a)) return false;
  }
  if (stripes_min && chunk.num_stripes < *stripes_min) return false;
  if (stripes_max && chunk.num_stripes > *stripes_max) return false;
  if (convert && soft && profile == *convert) return false;
  return true;
}

}  // namespace fsctl::relocation
