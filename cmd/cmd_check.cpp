// SPDX-License-Identifier: GPL-2.0-only
// `fsctl check`: structural checks of an unmounted filesystem (check/fs_check.cpp).
#include <iostream>

#include "check/fs_check.h"
#include "cmd/commands.h"
#include "cmd/leftover_report.h"
#include "cmd/json_members.h"
#include "cmd/keep_until_exit.h"

namespace fsctl::cmd {
using json = nlohmann::ordered_json;

namespace {
int run_check(const GlobalOptions& g, const std::vector<std::string>& devs) {
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, true);
  if (!fs) return report_error(g, fs.error());
  const KeepUntilExit keep(*fs);  // no teardown of the cache at exit (keep_until_exit.h)
  const auto leftover = report_leftover_work(**fs, rep);
  auto r = check::check_filesystem(**fs);
  if (!r) return report_error(g, r.error());
  if (g.format == Format::json) {
    json out = json_header("check");
    out["tree_blocks"] = r->tree_blocks;
    out["free_space_items"] = r->free_space_items;
    out["block_groups"] = r->block_groups;
    out["bg_tree_state"] = bg_tree_state_json((*fs)->bg_tree_state());
    out["leftover_work"] = leftover_work_json(leftover);
    json probs = json::array();
    for (auto& p : r->problems) probs.push_back({{"severity", p.error ? "error" : "warning"}, {"message", p.message}});
    out["problems"] = probs;
    out["notes"] = r->notes;
    out["errors"] = r->errors();
    out["trees_incomplete"] = r->trees_incomplete;
    out["bad_copies"] = r->bad_copies;
    std::cout << out.dump(2) << '\n';
  } else {
    for (auto& p : r->problems) std::cout << (p.error ? "ERROR: " : "WARNING: ") << p.message << '\n';
    for (auto& n : r->notes) std::cout << "NOTE: " << n << '\n';
    std::cout << "checked " << r->tree_blocks << " tree blocks, " << r->free_space_items << " free space items, "
              << r->block_groups << " block groups (" << (*fs)->bg_tree_state().describe() << "): " << r->errors()
              << " errors, " << r->problems.size() - r->errors() << " warnings";
    if (r->bad_copies) std::cout << ", " << r->bad_copies << " damaged copies read from another mirror";
    if (r->trees_incomplete) std::cout << ", " << r->trees_incomplete << " trees not checked in full";
    std::cout << '\n';
  }
  return r->errors() ? EXIT_PROBLEMS : EXIT_OK;
}
}  // namespace

void register_check(CLI::App& app, const GlobalOptions& g, Action& action) {
  auto* ck = app.add_subcommand("check", "Check extent items, free space and block group items of every tree block (always read-only)");
  auto devs = std::make_shared<std::vector<std::string>>();
  // btrfs check spellings: fsctl check never writes, so --readonly is what it
  // does anyway; it prints no progress, so -p is accepted and does nothing.
  auto ignored = std::make_shared<bool>(false);
  ck->add_flag("--readonly", *ignored, "Accepted for btrfs check compatibility: fsctl check is always read-only");
  ck->add_flag("-p,--progress", *ignored, "Accepted for btrfs check compatibility; no progress is printed");
  ck->add_option("devices", *devs, "All devices of the filesystem")->required();
  ck->callback([&g, &action, devs, ignored] { action = [&g, devs] { return run_check(g, *devs); }; });
}

}  // namespace fsctl::cmd
