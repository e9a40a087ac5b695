// SPDX-License-Identifier: GPL-2.0-only
// `fsctl inspect tree-stats`: height, nodes, leaves, bytes and items of every tree
// (check/tree_stats reads every block once).
#include <cstdio>
#include <iostream>
#include <memory>

#include "cmd/commands.h"
#include "cmd/item_json.h"
#include "cmd/json_members.h"
#include "check/tree_stats.h"

namespace fsctl::cmd {
using namespace fsctl::format;
using json = nlohmann::ordered_json;

namespace {

int run_tree_stats(const GlobalOptions& g, const std::vector<std::string>& devs) {
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, false);
  if (!fs) return report_error(g, fs.error());
  auto r = check::tree_stats(**fs);
  if (!r) return report_error(g, r.error());
  if (g.format == Format::json) {
    json out = json_header("inspect tree-stats");
    json trees = json::array();
    for (auto& t : r->trees)
      trees.push_back({{"root_id", static_cast<s64>(t.root_id) < 0 ? json(static_cast<s64>(t.root_id)) : json(t.root_id)},
                       {"key_offset", t.key_offset}, {"name", t.name}, {"height", t.height}, {"nodes", t.nodes},
                       {"leaves", t.leaves}, {"bytes", t.bytes}, {"items", t.items}, {"skipped", t.skipped}});
    out["nodesize"] = (*fs)->nodesize();
    out["trees"] = trees;
    out["unique_blocks"] = r->unique_blocks;
    out["unique_bytes"] = r->unique_bytes;
    out["bytes_read"] = r->bytes_read;
    out["seconds"] = r->seconds;
    std::cout << out.dump(2) << '\n';
    return EXIT_OK;
  }
  const UnitMode units = g.units_or(UNITS_RAW);  // bytes unless a unit option is given
  std::printf("%-24s %8s %6s %10s %10s %14s %12s\n", "tree", "key.off", "height", "nodes", "leaves", units.raw() ? "bytes" : "size", "items");
  for (auto& t : r->trees) {
    if (t.skipped) {
      std::printf("%-24s %8llu %6u   (being deleted, not walked)\n", t.name.c_str(), static_cast<unsigned long long>(t.key_offset), t.height);
      continue;
    }
    std::printf("%-24s %8llu %6u %10llu %10llu %14s %12llu\n", t.name.c_str(), static_cast<unsigned long long>(t.key_offset),
                t.height, static_cast<unsigned long long>(t.nodes), static_cast<unsigned long long>(t.leaves),
                format_bytes(t.bytes, units).c_str(), static_cast<unsigned long long>(t.items));
  }
  std::printf("unique tree blocks %llu (%s), read %s in %.3f s\n", static_cast<unsigned long long>(r->unique_blocks),
              bytes_phrase(r->unique_bytes, units).c_str(), bytes_phrase(r->bytes_read, units).c_str(), r->seconds);
  return EXIT_OK;
}

}  // namespace

void register_inspect_tree_stats(CLI::App& inspect, const GlobalOptions& g, Action& action) {
  auto* ts = inspect.add_subcommand("tree-stats", "Height, nodes, leaves and bytes of every tree (reads every block once)");
  auto ts_devs = std::make_shared<std::vector<std::string>>();
  ts->add_option("devices", *ts_devs, "All devices of the filesystem")->required();
  ts->callback([&g, &action, ts_devs] { action = [&g, ts_devs] { return run_tree_stats(g, *ts_devs); }; });
}

}  // namespace fsctl::cmd
