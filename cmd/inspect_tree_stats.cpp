// SPDX-License-Identifier: GPL-2.0-only
// `fsctl inspect tree-stats`: height, nodes, leaves and bytes of every tree
// (check/tree_stats.h), as text or JSON. Parses its options, calls
// the library, renders text (stdout) or JSON (stdout). Registered by
// register_inspect (cmd_inspect.cpp).
#include <cstdio>
#include <iostream>
#include <memory>

#include "check/tree_stats.h"
#include "cmd/commands.h"
#include "cmd/item_json.h"
#include "lib/ctree/search.h"
#include "lib/format/csum.h"
#include "lib/format/root_item.h"
#include "lib/format/super.h"
#include "lib/format/feature_flags.h"
#include "lib/format/names.h"
#include "lib/fs/fs_info.h"
#include "lib/io/mount_check.h"
#include "cmd/inspect.h"

namespace fsctl::cmd {
using namespace fsctl::format;
using json = nlohmann::ordered_json;

namespace {

int run_tree_stats(const GlobalOptions& g, const std::vector<std::string>& devs) {
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, false);
  if (!fs) return report_error(fs.error());
  auto r = check::tree_stats(**fs);
  if (!r) return report_error(r.error());
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
  std::printf("%-24s %8s %6s %10s %10s %14s %12s\n", "tree", "key.off", "height", "nodes", "leaves", "bytes", "items");
  for (auto& t : r->trees) {
    if (t.skipped) {
      std::printf("%-24s %8llu %6u   (being deleted, not walked)\n", t.name.c_str(), static_cast<unsigned long long>(t.key_offset), t.height);
      continue;
    }
    std::printf("%-24s %8llu %6u %10llu %10llu %14llu %12llu\n", t.name.c_str(), static_cast<unsigned long long>(t.key_offset),
                t.height, static_cast<unsigned long long>(t.nodes), static_cast<unsigned long long>(t.leaves),
                static_cast<unsigned long long>(t.bytes), static_cast<unsigned long long>(t.items));
  }
  std::printf("unique tree blocks %llu (%llu bytes), read %llu bytes in %.3f s\n",
              static_cast<unsigned long long>(r->unique_blocks), static_cast<unsigned long long>(r->unique_bytes),
              static_cast<unsigned long long>(r->bytes_read), r->seconds);
  return EXIT_OK;
}

}  // namespace

void register_inspect_tree_stats(CLI::App* inspect, const GlobalOptions& g, Action& action) {
  auto* ts = inspect->add_subcommand("tree-stats", "Height, nodes, leaves and bytes of every tree (reads every block once)");
  auto ts_devs = std::make_shared<std::vector<std::string>>();
  ts->add_option("devices", *ts_devs, "All devices of the filesystem")->required();
  ts->callback([&g, &action, ts_devs] { action = [&g, ts_devs] { return run_tree_stats(g, *ts_devs); }; });
}

}  // namespace fsctl::cmd
