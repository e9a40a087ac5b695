// SPDX-License-Identifier: GPL-2.0-only
// `fsctl balance cancel DEV...` (btrfs balance cancel, offline): deletes the
// BALANCE_ITEM of a paused or interrupted kernel balance and drops the
// relocation trees it left (lib/rescue/balance_cancel.h).
#include <cstdio>
#include <iostream>

#include "cmd/commands.h"
#include "cmd/interrupt.h"
#include "cmd/leftover_report.h"
#include "cmd/one_commit_report.h"
#include "cmd/units.h"
#include "lib/format/balance_item.h"
#include "lib/rescue/balance_cancel.h"

namespace fsctl::cmd {
using json = nlohmann::ordered_json;

namespace {

/// Text of a cancel that dropped relocation trees.
int print_reloc_cancel(const rescue::BalanceCancelResult& c, bool dry_run, const std::string& types, UnitMode units) {
  std::string ids;
  for (u64 id : c.relocation_trees) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
  const auto& d = c.drop;
  std::printf("%s the relocation trees of subvolumes %s%s, %zu items of relocation inodes: %llu tree blocks freed, %llu shared "
              "blocks left to the subvolumes, %llu data references dropped, %llu data extents freed\n",
              dry_run ? "dry run: would drop" : "dropped", ids.empty() ? "(none)" : ids.c_str(),
              c.balance_found ? (", the BALANCE_ITEM of the balance of " + types + " block groups").c_str() : "",
              c.relocation_inode_items.size(),
              static_cast<unsigned long long>(d.tree_blocks_freed), static_cast<unsigned long long>(d.shared_blocks_left),
              static_cast<unsigned long long>(d.data_refs_dropped), static_cast<unsigned long long>(d.data_extents_freed));
  if (dry_run) {
    std::printf("dry run: %llu commits, reserving %s; nothing written\n", static_cast<unsigned long long>(c.commits),
                bytes_phrase(c.run.reserved_bytes, units).c_str());
    return EXIT_OK;
  }
  std::printf("%llu commits, %s\n", static_cast<unsigned long long>(c.commits), one_commit_numbers(c.run, units).c_str());
  if (c.run.interrupted) {
    std::printf("interrupted (%s): %zu of %zu relocation trees dropped; consistent at the last commit: rerun fsctl balance cancel to go on\n",
                InterruptScope::signal_name(), c.relocation_trees_dropped, c.relocation_trees.size());
    return EXIT_INTERRUPTED;
  }
  if (c.qgroups && c.qgroups->wrote)
    std::printf("qgroups: %llu rewritten from the trees (the kernel's were wrong)\n", static_cast<unsigned long long>(c.qgroups->qgroups_updated));
  else if (c.qgroups)
    std::printf("qgroups: verified, all right\n");
  std::printf("balance cancelled: the next mount has no relocation to recover and no balance to resume\n");
  return EXIT_OK;
}

int run_balance_cancel(const GlobalOptions& g, const std::vector<std::string>& devs, bool dry_run, u64 batch) {
  StderrReporter rep(g);
  auto fs = open_read_write(devs, g, rep);
  if (!fs) return report_error(g, fs.error());
  const auto leftover = report_leftover_work(**fs, rep);
  rescue::BalanceCancelOptions o;
  o.dry_run = dry_run;
  InterruptScope signals;
  o.stop = signals.stop();
  o.batch = batch;
  auto shown = dry_run ? nullptr : stderr_progress(g, "balance cancel");
  o.progress = shown.get();
  auto r = rescue::cancel_balance(**fs, o);
  if (shown) shown->finish();
  if (!r) return report_error(g, r.error(), devs[0]);
  const auto& c = *r;
  if (!dry_run && !c.run.wrote && !c.run.interrupted) refresh_lagging_supers(**fs, rep);
  const UnitMode units = g.units_or(UNITS_RAW);
  const std::string types = c.balance_found ? format::balance_types_to_string(c.balance_flags) : "";
  if (g.format == Format::json) {
    json out = json_header("balance cancel");
    out["dry_run"] = dry_run;
    out["balance_found"] = c.balance_found;
    out["balance_flags"] = c.balance_flags;
    put_one_commit_json(out, c.run);
    out["relocation_trees"] = c.relocation_trees;
    out["relocation_trees_dropped"] = c.relocation_trees_dropped;
    out["commits"] = c.commits;
    out["relocation_inode_items"] = c.relocation_inode_items.size();
    out["drop"] = {{"tree_blocks_freed", c.drop.tree_blocks_freed},
                   {"shared_blocks_left", c.drop.shared_blocks_left},
                   {"data_refs_dropped", c.drop.data_refs_dropped},
                   {"data_extents_freed", c.drop.data_extents_freed}};
    out["qgroups_rewritten"] = c.qgroups && c.qgroups->wrote ? json(c.qgroups->qgroups_updated) : json(nullptr);
    if (c.run.interrupted && !c.relocation_trees.empty())
      out["state_note"] = std::to_string(c.relocation_trees_dropped) + " of " + std::to_string(c.relocation_trees.size()) +
                          " relocation trees dropped; consistent at the last commit: rerun fsctl balance cancel to go on";
    out["leftover_work"] = leftover_work_json(leftover);
    std::cout << out.dump(2) << '\n';
    return c.run.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
  }
  if (!c.relocation_trees.empty() || !c.relocation_inode_items.empty()) return print_reloc_cancel(c, dry_run, types, units);
  if (print_if_interrupted(c.run)) return EXIT_INTERRUPTED;
  if (!c.balance_found) {
    std::cout << "no paused or interrupted kernel balance: nothing to do\n";
    return EXIT_OK;
  }
  if (dry_run) {
    std::printf("dry run: would cancel the paused balance of %s block groups (delete its BALANCE_ITEM), reserving %s; nothing written\n",
                types.c_str(), bytes_phrase(c.run.reserved_bytes, units).c_str());
    return EXIT_OK;
  }
  std::printf("balance cancelled: transaction %llu deleted the BALANCE_ITEM of the paused balance of %s block groups (%s)\n",
              static_cast<unsigned long long>(c.run.transid), types.c_str(), one_commit_numbers(c.run, units).c_str());
  return EXIT_OK;
}

}  // namespace

CLI::App* register_balance_cancel(CLI::App& balance, const GlobalOptions& g, Action& action) {
  auto* cancel = balance.add_subcommand("cancel", "Cancel a paused or interrupted kernel balance offline: delete its BALANCE_ITEM");
  auto devs = std::make_shared<std::vector<std::string>>();
  auto dry = std::make_shared<bool>(false);
  auto batch = std::make_shared<u64>(8192);
  cancel->add_flag("-n,--dry-run", *dry, "Say what would be done; write nothing");
  cancel->add_option("--batch", *batch, "Relocation trees: tree blocks dropped per commit at most (default 8192)")
      ->check(CLI::PositiveNumber);
  cancel->add_option("devices", *devs, "All devices of the filesystem")->required();
  cancel->callback([&g, &action, devs, dry, batch] {
    action = [&g, devs, dry, batch] { return run_balance_cancel(g, *devs, *dry, *batch); };
  });
  return cancel;
}

}  // namespace fsctl::cmd
