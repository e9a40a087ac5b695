// SPDX-License-Identifier: GPL-2.0-only
// `fsctl balance cancel DEV...` (btrfs balance cancel, offline): deletes the
// BALANCE_ITEM of a paused or interrupted kernel balance
// (lib/relocation/balance_cancel.h).
#include <cstdio>
#include <iostream>

#include "cmd/commands.h"
#include "cmd/interrupt.h"
#include "cmd/leftover_report.h"
#include "cmd/one_commit_report.h"
#include "cmd/units.h"
#include "lib/format/balance_item.h"
#include "lib/relocation/balance_cancel.h"

namespace fsctl::cmd {
using json = nlohmann::ordered_json;

namespace {

int run_balance_cancel(const GlobalOptions& g, const std::vector<std::string>& devs, bool dry_run) {
  StderrReporter rep(g);
  auto fs = open_read_write(devs, g, rep);
  if (!fs) return report_error(g, fs.error());
  const auto leftover = report_leftover_work(**fs, rep);
  relocation::BalanceCancelOptions o;
  o.dry_run = dry_run;
  InterruptScope signals;
  o.stop = signals.stop();
  auto r = relocation::cancel_balance(**fs, o);
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
    out["leftover_work"] = leftover_work_json(leftover);
    std::cout << out.dump(2) << '\n';
    return c.run.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
  }
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
  cancel->add_flag("-n,--dry-run", *dry, "Say what would be done; write nothing");
  cancel->add_option("devices", *devs, "All devices of the filesystem")->required();
  cancel->callback([&g, &action, devs, dry] { action = [&g, devs, dry] { return run_balance_cancel(g, *devs, *dry); }; });
  return cancel;
}

}  // namespace fsctl::cmd
