// SPDX-License-Identifier: GPL-2.0-only
// `fsctl quota disable | enable` (btrfs quota, offline): deletes the quota
// tree so that the kernel mounts with quota off, or creates it (numbers
// then from `qgroup verify --repair` or the kernel's rescan).
#include <cstdio>
#include <iostream>

#include "cmd/commands.h"
#include "cmd/interrupt.h"
#include "cmd/leftover_report.h"
#include "cmd/one_commit_report.h"
#include "cmd/units.h"
#include "lib/qgroup/quota_disable.h"
#include "lib/qgroup/quota_enable.h"

namespace fsctl::cmd {
using json = nlohmann::ordered_json;

namespace {

int run_disable(const GlobalOptions& g, const std::vector<std::string>& devs, bool dry_run) {
  StderrReporter rep(g);
  // A dry run opens like the real run (exclusive, a mounted filesystem
  // refused): its rehearsal needs a transaction; it never commits.
  auto fs = open_read_write(devs, g, rep);
  if (!fs) return report_error(g, fs.error());
  // Unfinished kernel work does not stop it (the quota tree is apart from
  // balance and relocation): disabling quota is how a balance that runs a
  // mount out of memory with quota on is resumed without it.
  const auto leftover = report_leftover_work(**fs, rep);
  qgroup::QuotaDisableOptions o;
  o.dry_run = dry_run;
  InterruptScope signals;
  o.stop = signals.stop();
  auto r = qgroup::disable_quota(**fs, o);
  if (!r) return report_error(g, r.error(), devs[0]);
  const auto& d = *r;
  if (!dry_run && !d.run.wrote && !d.run.interrupted) refresh_lagging_supers(**fs, rep);
  const UnitMode units = g.units_or(UNITS_RAW);
  if (g.format == Format::json) {
    json out = json_header("quota disable");
    out["dry_run"] = dry_run;
    out["quota_was_enabled"] = d.quota_was_enabled;
    out["status_flags"] = d.status_flags;
    out["simple_quota"] = d.simple_quota;
    out["qgroups"] = d.qgroups;
    out["relations"] = d.relations;
    out["quota_tree_blocks"] = d.quota_tree_blocks;
    put_one_commit_json(out, d.run);
    out["leftover_work"] = leftover_work_json(leftover);
    std::cout << out.dump(2) << '\n';
    return d.run.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
  }
  if (print_if_interrupted(d.run)) return EXIT_INTERRUPTED;
  if (!d.quota_was_enabled) {
    std::cout << "quota is not enabled on this filesystem: nothing to do\n";
    return EXIT_OK;
  }
  const std::string what = std::to_string(d.quota_tree_blocks) + " tree blocks, " + std::to_string(d.qgroups) +
                           " qgroups, " + std::to_string(d.relations) + " relations";
  if (dry_run) {
    std::printf("dry run: would delete the quota tree (%s), reserving %s; nothing written\n", what.c_str(),
                bytes_phrase(d.run.reserved_bytes, units).c_str());
    return EXIT_OK;
  }
  std::printf("quota disabled: transaction %llu deleted the quota tree (%s; %s)\n", static_cast<unsigned long long>(d.run.transid),
              what.c_str(), one_commit_numbers(d.run, units).c_str());
  if (d.simple_quota)
    std::printf("simple quotas: the SIMPLE_QUOTA incompat bit stays set, as the kernel's quota disable leaves it (the data extents keep their owner refs)\n");
  return EXIT_OK;
}

int run_enable(const GlobalOptions& g, const std::vector<std::string>& devs, bool dry_run) {
  StderrReporter rep(g);
  auto fs = open_read_write(devs, g, rep);
  if (!fs) return report_error(g, fs.error());
  const auto leftover = report_leftover_work(**fs, rep);
  qgroup::QuotaEnableOptions o;
  o.dry_run = dry_run;
  InterruptScope signals;
  o.stop = signals.stop();
  auto r = qgroup::enable_quota(**fs, o);
  if (!r) return report_error(g, r.error(), devs[0]);
  const auto& e = *r;
  if (!dry_run && !e.run.wrote && !e.run.interrupted) refresh_lagging_supers(**fs, rep);
  const UnitMode units = g.units_or(UNITS_RAW);
  if (g.format == Format::json) {
    json out = json_header("quota enable");
    out["dry_run"] = dry_run;
    out["already_enabled"] = e.already_enabled;
    out["qgroups_created"] = e.qgroups_created;
    put_one_commit_json(out, e.run);
    out["leftover_work"] = leftover_work_json(leftover);
    std::cout << out.dump(2) << '\n';
    return e.run.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
  }
  if (print_if_interrupted(e.run)) return EXIT_INTERRUPTED;
  if (e.already_enabled) {
    std::cout << "quota is already enabled on this filesystem: nothing to do\n";
    return EXIT_OK;
  }
  if (dry_run) {
    std::printf("dry run: would create the quota tree with %llu qgroups, reserving %s; nothing written\n",
                static_cast<unsigned long long>(e.qgroups_created), bytes_phrase(e.run.reserved_bytes, units).c_str());
    return EXIT_OK;
  }
  std::printf("quota enabled: transaction %llu created the quota tree with %llu qgroups, marked inconsistent (%s)\n",
              static_cast<unsigned long long>(e.run.transid), static_cast<unsigned long long>(e.qgroups_created),
              one_commit_numbers(e.run, units).c_str());
  std::printf("the numbers are not computed yet: run fsctl qgroup verify --repair (offline rescan), or mount: the kernel rescans\n");
  return EXIT_OK;
}

}  // namespace

void register_quota(CLI::App& app, const GlobalOptions& g, Action& action) {
  auto* q = app.add_subcommand("quota", "Quota of an unmounted filesystem (btrfs quota, offline)");
  q->require_subcommand(1);
  auto* dis = q->add_subcommand("disable", "Delete the quota tree: the kernel mounts with quota off");
  auto devs = std::make_shared<std::vector<std::string>>();
  auto dry = std::make_shared<bool>(false);
  dis->add_flag("-n,--dry-run", *dry, "Say what would be done; write nothing");
  dis->add_option("devices", *devs, "All devices of the filesystem")->required();
  dis->callback([&g, &action, devs, dry] { action = [&g, devs, dry] { return run_disable(g, *devs, *dry); }; });
  auto* en = q->add_subcommand("enable", "Create the quota tree (numbers from qgroup verify --repair or the kernel's rescan)");
  auto e_devs = std::make_shared<std::vector<std::string>>();
  auto e_dry = std::make_shared<bool>(false);
  en->add_flag("-n,--dry-run", *e_dry, "Say what would be done; write nothing");
  en->add_option("devices", *e_devs, "All devices of the filesystem")->required();
  en->callback([&g, &action, e_devs, e_dry] { action = [&g, e_devs, e_dry] { return run_enable(g, *e_devs, *e_dry); }; });
}

}  // namespace fsctl::cmd
