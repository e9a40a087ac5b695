// SPDX-License-Identifier: GPL-2.0-only
// `fsctl inspect block-groups`: the block groups and which tree holds their
// items, as text or JSON. Parses its options, calls
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

int run_block_groups(const GlobalOptions& g, const std::vector<std::string>& devs) {
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, true);
  if (!fs) return report_error(fs.error());
  const auto& st = (*fs)->bg_tree_state();
  if (g.format == Format::json) {
    json out = json_header("inspect block-groups");
    out["bg_tree_state"] = {{"state", st.describe()}, {"compat_ro_block_group_tree", st.has_bg_tree_bit},
                            {"changing_bg_tree", st.changing}, {"bg_tree_exists", st.bg_tree_exists},
                            {"in_block_group_tree", st.in_bg_tree}, {"in_extent_tree", st.in_extent_tree}};
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
  std::printf("%16s %14s %14s %-20s %-8s %s\n", "start", "length", "used", "flags", "profile", "item in");
  for (auto& bg : (*fs)->block_groups())
    std::printf("%16llu %14llu %14llu %-20s %-8s %s\n", static_cast<unsigned long long>(bg.start),
                static_cast<unsigned long long>(bg.length), static_cast<unsigned long long>(bg.used),
                block_group_flags_to_string(bg.flags).c_str(), profile_name(bg.flags).c_str(),
                tree_name(bg.item_tree).c_str());
  return EXIT_OK;
}

}  // namespace

void register_inspect_block_groups(CLI::App* inspect, const GlobalOptions& g, Action& action) {
  auto* bg = inspect->add_subcommand("block-groups", "List block groups and which tree holds their items");
  auto bg_devs = std::make_shared<std::vector<std::string>>();
  bg->add_option("devices", *bg_devs, "All devices of the filesystem")->required();
  bg->callback([&g, &action, bg_devs] { action = [&g, bg_devs] { return run_block_groups(g, *bg_devs); }; });
}

}  // namespace fsctl::cmd
