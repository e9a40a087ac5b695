// SPDX-License-Identifier: GPL-2.0-only
// `fsctl balance status DEV...` (btrfs balance status, offline): whether a
// kernel balance is paused on the unmounted filesystem (its BALANCE_ITEM in
// the root tree, lib/fs/leftover_work.h), what it balances, and the other
// work an interrupted balance leaves (relocation trees). Exit 0 when no
// balance is found, 1 when one is paused: the codes of btrfs balance status
// (btrfs-progs cmds/balance.c: "0: no pending balance, 1: status of a
// pending balance"). fsctl's own balance leaves no state to report: it stops
// between whole commits, each complete.
#include <cstdio>
#include <iostream>

#include "cmd/commands.h"
#include "cmd/leftover_report.h"
#include "lib/format/balance_item.h"

namespace fsctl::cmd {
using json = nlohmann::ordered_json;

namespace {

/// The btrfs_balance_item control bits set in `flags` other than the types
/// ("force", "resume"; kernel volumes.h BTRFS_BALANCE_FORCE/RESUME).
std::vector<std::string> balance_control_names(u64 flags) {
  std::vector<std::string> out;
  if (flags & format::BALANCE_FLAG_FORCE) out.emplace_back("force");
  if (flags & format::BALANCE_FLAG_RESUME) out.emplace_back("resume");
  return out;
}

int run_balance_status(const GlobalOptions& g, const std::vector<std::string>& devs) {
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, false);
  if (!fs) return report_error(g, fs.error());
  auto work = fs::find_leftover_work(**fs);
  if (!work) return report_error(g, work.error(), devs[0]);
  const bool paused = work->balance_flags.has_value();
  const u64 flags = work->balance_flags.value_or(0);
  if (g.format == Format::json) {
    json out = json_header("balance status");
    out["balance"] = paused ? "paused" : "none";
    out["balance_flags"] = paused ? json(flags) : json(nullptr);
    out["balance_types"] = json::array();
    for (auto t : format::balance_type_names(flags)) out["balance_types"].push_back(std::string(t));
    out["balance_control"] = balance_control_names(flags);
    out["leftover_work"] = leftover_work_json(*work);
    std::cout << out.dump(2) << '\n';
    return paused ? EXIT_PROBLEMS : EXIT_OK;
  }
  const std::string& dev = devs[0];
  if (!paused) {
    std::printf("No balance found on '%s'\n", dev.c_str());
  } else {
    std::string control;
    for (const auto& c : balance_control_names(flags)) control += ", " + c;
    std::printf("Balance on '%s' is paused (a kernel balance of %s block groups%s; its BALANCE_ITEM is in the root tree)\n",
                dev.c_str(), format::balance_types_to_string(flags).c_str(), control.c_str());
    std::printf("the next read-write mount resumes it (mount -o skip_balance keeps it paused); "
                "`fsctl balance cancel %s` cancels it offline\n", dev.c_str());
  }
  // The rest of what the next mount finishes (relocation trees, subvolumes
  // being dropped), one sentence each, as other commands' NOTEs say it.
  fs::LeftoverWork rest = *work;
  rest.balance_flags.reset();
  for (const auto& s : fs::describe_leftover_work(rest)) std::printf("%s\n", s.c_str());
  return paused ? EXIT_PROBLEMS : EXIT_OK;
}

}  // namespace

CLI::App* register_balance_status(CLI::App& balance, const GlobalOptions& g, Action& action) {
  auto* status = balance.add_subcommand("status", "Say whether a kernel balance is paused on the filesystem (exit 1 when one is)");
  auto devs = std::make_shared<std::vector<std::string>>();
  status->add_option("devices", *devs, "All devices of the filesystem")->required();
  status->callback([&g, &action, devs] { action = [&g, devs] { return run_balance_status(g, *devs); }; });
  return status;
}

}  // namespace fsctl::cmd
