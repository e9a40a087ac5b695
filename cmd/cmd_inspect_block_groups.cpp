// SPDX-License-Identifier: GPL-2.0-only
// `fsctl inspect block-groups`: every block group with the tree that holds its item, and
// the filesystem's block group tree state.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cmd/commands.h"
#include "cmd/item_json.h"
#include "cmd/json_members.h"
#include "lib/format/names.h"
#include "lib/fs/fs_info.h"

namespace fsctl::cmd {
using namespace fsctl::format;
using json = nlohmann::ordered_json;

namespace {

int run_block_groups(const GlobalOptions& g, const std::vector<std::string>& devs) {
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, true);
  if (!fs) return report_error(g, fs.error());
  const auto& st = (*fs)->bg_tree_state();
  if (g.format == Format::json) {
    json out = json_header("inspect block-groups");
    out["bg_tree_state"] = bg_tree_state_json(st);
    json list = json::array();
    for (auto& bg : (*fs)->block_groups())
      list.push_back({{"start", bg.start}, {"length", bg.length}, {"used", bg.used}, {"flags", bg.flags},
                      {"flags_name", block_group_flags_to_string(bg.flags)}, {"profile", profile_name(bg.flags)},
                      {"chunk_objectid", bg.chunk_objectid}, {"item_tree", tree_name(bg.item_tree)}});
    out["block_groups"] = list;
    std::cout << out.dump(2) << '\n';
    return EXIT_OK;
  }
  std::printf("block group items: %s (%llu in the block group tree, %llu in the extent tree)\n", st.describe().c_str(),
              static_cast<unsigned long long>(st.in_bg_tree), static_cast<unsigned long long>(st.in_extent_tree));
  // Start is an address, always in bytes; length and used follow the unit options (default bytes).
  const UnitMode units = g.units_or(UNITS_RAW);
  std::printf("%16s %14s %14s %-20s %-8s %s\n", "start", "length", "used", "flags", "profile", "item in");
  for (auto& bg : (*fs)->block_groups())
    std::printf("%16llu %14s %14s %-20s %-8s %s\n", static_cast<unsigned long long>(bg.start),
                format_bytes(bg.length, units).c_str(), format_bytes(bg.used, units).c_str(),
                block_group_flags_to_string(bg.flags).c_str(), profile_name(bg.flags).c_str(),
                tree_name(bg.item_tree).c_str());
  return EXIT_OK;
}

}  // namespace

void register_inspect_block_groups(CLI::App& inspect, const GlobalOptions& g, Action& action) {
  auto* bg = inspect.add_subcommand("block-groups", "List block groups and which tree holds their items");
  auto bg_devs = std::make_shared<std::vector<std::string>>();
  bg->add_option("devices", *bg_devs, "All devices of the filesystem")->required();
  bg->callback([&g, &action, bg_devs] { action = [&g, bg_devs] { return run_block_groups(g, *bg_devs); }; });
}

}  // namespace fsctl::cmd
