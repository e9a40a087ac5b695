// SPDX-License-Identifier: GPL-2.0-only
// `fsctl inspect usage DEV...`: what `btrfs filesystem usage` shows for a
// mounted filesystem (which no tool shows for an unmounted one), plus what
// a metadata balance could give back to unallocated space.
#include <cctype>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cmd/commands.h"
#include "lib/format/names.h"
#include "lib/fs/space_usage.h"

namespace fsctl::cmd {
namespace {
using json = nlohmann::ordered_json;

std::string device_path(const fs::FsInfo& fs, u64 devid) {
  const auto* d = fs.devices().find(devid);
  return d ? d->path : "<missing devid " + std::to_string(devid) + ">";
}

// "Metadata,DUP" as btrfs filesystem usage names a type and profile.
std::string kind_name(u64 flags) {
  std::string type = (flags & format::BLOCK_GROUP_DATA) && (flags & format::BLOCK_GROUP_METADATA) ? "Data+Metadata"
                     : (flags & format::BLOCK_GROUP_DATA)                                        ? "Data"
                     : (flags & format::BLOCK_GROUP_METADATA)                                    ? "Metadata"
                                                                                                 : "System";
  // btrfs-progs' profile names: "single" lower case, the others upper case.
  std::string profile = format::profile_name(flags);
  if (profile != "single")
    for (char& c : profile) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return type + "," + profile;
}

json usage_json(const fs::FsInfo& fs, const fs::SpaceUsage& u) {
  json out = json_header("inspect usage");
  out["total_bytes"] = u.total_bytes;
  out["allocated"] = u.allocated;
  out["unallocated"] = u.unallocated;
  out["used"] = u.used;
  json devs = json::array();
  for (const auto& d : u.devices)
    devs.push_back({{"devid", d.devid}, {"path", device_path(fs, d.devid)}, {"total_bytes", d.total_bytes},
                    {"allocated", d.allocated}, {"unallocated", d.unallocated()}});
  out["devices"] = devs;
  json profs = json::array();
  for (const auto& p : u.profiles) {
    json phys = json::array();
    for (auto [devid, bytes] : p.physical) phys.push_back({{"devid", devid}, {"bytes", bytes}});
    profs.push_back({{"type", format::block_group_flags_to_string(p.flags & format::BLOCK_GROUP_TYPE_MASK)},
                     {"profile", format::profile_name(p.flags)}, {"flags", p.flags}, {"chunks", p.chunks},
                     {"size", p.size}, {"used", p.used}, {"physical", phys}, {"reclaimable_by_balance", p.reclaimable}});
  }
  out["profiles"] = profs;
  return out;
}

void print_usage(const fs::FsInfo& fs, const fs::SpaceUsage& u, UnitMode units) {
  u64 reclaim = 0;
  for (const auto& p : u.profiles) reclaim += p.reclaimable;
  std::printf("Overall:\n");
  std::printf("    %-30s %16s\n", "Device size:", format_bytes(u.total_bytes, units).c_str());
  std::printf("    %-30s %16s\n", "Device allocated:", format_bytes(u.allocated, units).c_str());
  std::printf("    %-30s %16s\n", "Device unallocated:", format_bytes(u.unallocated, units).c_str());
  std::printf("    %-30s %16s\n", "Used:", format_bytes(u.used, units).c_str());
  std::printf("    %-30s %16s\n", "Reclaimable by balance -m:", format_bytes(reclaim, units).c_str());
  for (const auto& p : u.profiles) {
    double pct = p.size ? 100.0 * static_cast<double>(p.used) / static_cast<double>(p.size) : 0.0;
    std::printf("\n%s: Size:%s, Used:%s (%.2f%%)", kind_name(p.flags).c_str(), format_bytes(p.size, units).c_str(),
                format_bytes(p.used, units).c_str(), pct);
    if (!(p.flags & format::BLOCK_GROUP_DATA)) std::printf(", Reclaimable:%s", format_bytes(p.reclaimable, units).c_str());
    std::printf("\n");
    for (auto [devid, bytes] : p.physical)
      std::printf("   %-20s %12s\n", device_path(fs, devid).c_str(), format_bytes(bytes, units).c_str());
  }
  std::printf("\nUnallocated:\n");
  for (const auto& d : u.devices)
    std::printf("   %-20s %12s\n", device_path(fs, d.devid).c_str(), format_bytes(d.unallocated(), units).c_str());
}

int run_usage(const GlobalOptions& g, const std::vector<std::string>& devs) {
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, true);
  if (!fs) return report_error(g, fs.error());
  auto u = fs::space_usage(**fs);
  if (!u) return report_error(g, u.error(), devs[0]);
  if (g.format == Format::json)
    std::cout << usage_json(**fs, *u).dump(2) << '\n';
  else
    print_usage(**fs, *u, g.units_or(UNITS_HUMAN));  // human sizes unless a unit option is given, as btrfs
  return EXIT_OK;
}

}  // namespace

void register_inspect_usage(CLI::App& inspect, const GlobalOptions& g, Action& action) {
  auto* us = inspect.add_subcommand("usage", "Allocated, used and unallocated space per device and per type/profile "
                                             "(btrfs filesystem usage, offline), and what balance -m could reclaim");
  auto devs = std::make_shared<std::vector<std::string>>();
  us->add_option("devices", *devs, "All devices of the filesystem")->required();
  us->callback([&g, &action, devs] { action = [&g, devs] { return run_usage(g, *devs); }; });
}

}  // namespace fsctl::cmd
