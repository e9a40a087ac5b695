// SPDX-License-Identifier: GPL-2.0-only
// `fsctl balance -m[FILTERS] DEV...`: offline metadata relocation with exact
// qgroups (lib/relocation). Filters are attached to -m as with btrfs balance
// start (-musage=50,limit=2); --metadata=FILTERS is the long form.
// `fsctl balance start ...` is the same command (btrfs' spelling); -d and a
// filter given as a separate word (-m usage=50) are usage errors saying why.
// `balance cancel` is cmd_balance_cancel.cpp.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>

#include <chrono>
#include <tuple>
#include <cstdio>
#include <iostream>

#include "check/qgroup_verify.h"
#include "cmd/commands.h"
#include "cmd/interrupt.h"
#include "cmd/keep_until_exit.h"
#include "lib/format/names.h"
#include "lib/qgroup/qgroup.h"
#include "lib/relocation/balance.h"

namespace fsctl::cmd {
using json = nlohmann::ordered_json;

namespace {

struct BalanceArgs {
  std::vector<std::string> devs;
  bool metadata = false, system = false, force = false, dry_run = false;
  bool data = false;  // -d was given: refused (fsctl relocates metadata only)
  bool progress = false;  // -p: progress lines also when stderr is not a terminal
  std::string mfilters, sfilters;
  u64 batch = 0;
  std::string verify = "auto";
};

// Whether a device argument is rather a balance filter that lost its option
// ("-m usage=50": getopt's optional argument must be attached). A file of that
// name is taken as a device.
bool looks_like_filter(const std::string& arg) {
  static const char* const words[] = {"usage", "limit", "devid", "drange", "vrange", "stripes", "profiles", "convert", "soft"};
  std::string first = arg.substr(0, arg.find(','));
  std::string name = first.substr(0, first.find('='));
  bool known = std::find(std::begin(words), std::end(words), name) != std::end(words);
  if (!known) return false;
  struct stat st;
  return ::stat(arg.c_str(), &st) != 0;
}

// One type's filters in the JSON report: the text as given (-m's for system
// block groups when -s is not given, as btrfs balance does) and each filter
// parsed; a filter not given is null.
json filters_json(const std::string& text, const relocation::BalanceFilters& f) {
  auto range = [](const std::optional<u64>& lo, const std::optional<u64>& hi, const char* a, const char* b) {
    if (!lo && !hi) return json(nullptr);
    return json{{a, lo ? json(*lo) : json(nullptr)}, {b, hi ? json(*hi) : json(nullptr)}};
  };
  json profiles = nullptr;
  if (f.has_profiles) {
    profiles = json::array();
    for (const char* name : {"single", "dup", "raid0", "raid1", "raid1c3", "raid1c4", "raid10", "raid5", "raid6"}) {
      u64 bits = *relocation::profile_from_name(name);
      if (f.profiles & (bits ? bits : relocation::BalanceFilters::PROFILE_SINGLE)) profiles.push_back(name);
    }
  }
  return json{{"text", text},
              {"usage", range(f.usage_min, f.usage_max, "min", "max")},
              {"limit", range(f.limit_min, f.limit_max, "min", "max")},
              {"devid", f.devid ? json(*f.devid) : json(nullptr)},
              {"drange", range(f.drange_start, f.drange_end, "start", "end")},
              {"vrange", range(f.vrange_start, f.vrange_end, "start", "end")},
              {"stripes", range(f.stripes_min, f.stripes_max, "min", "max")},
              {"profiles", profiles},
              {"convert", f.convert ? json(format::profile_name(*f.convert)) : json(nullptr)},
              {"soft", f.soft}};
}

// The selected groups left in place for lack of space, for the JSON report.
json not_relocated_json(const relocation::BalanceReport& b) {
  json out = json::array();
  for (const auto& n : b.not_relocated)
    out.push_back({{"start", n.start}, {"flags", format::block_group_flags_to_string(n.flags)}, {"reason", n.reason}});
  return out;
}

// The chunks the run created (a dry run: would create), for the JSON report;
// null for a dry run that planned only its first batch (not known).
json chunks_created_json(const relocation::BalanceReport& b) {
  if (b.dry_run && !b.whole_run_simulated) return nullptr;
  json out = json::array();
  for (const auto& c : b.chunks_created)
    out.push_back({{"start", c.logical}, {"length", c.length}, {"flags", format::block_group_flags_to_string(c.flags)}});
  return out;
}

// One line per chunk the run created (a dry run: would create).
void print_chunks_created(const relocation::BalanceReport& b, UnitMode units) {
  if (b.dry_run && !b.whole_run_simulated) {
    std::printf("  new chunks: not known (only the first batch was planned)\n");
    return;
  }
  for (const auto& c : b.chunks_created)
    std::printf("  %s chunk %llu %s, %s\n", b.dry_run ? "would create" : "created", static_cast<unsigned long long>(c.logical),
                format::block_group_flags_to_string(c.flags).c_str(), format_bytes(c.length, units).c_str());
}

// The dry run's list: each selected group in processing order with its
// flags and use, and whether the run would leave it in place.
void print_selected(const fs::FsInfo& fs, const relocation::BalanceReport& b, UnitMode units) {
  for (u64 s : b.selected) {
    const fs::BlockGroup* bg = fs.block_group_of(s);
    if (!bg) continue;
    std::string left;
    for (const auto& n : b.not_relocated)
      if (n.start == s) left = " (would be left in place: " + n.reason + ")";
    double pct = bg->length ? 100.0 * static_cast<double>(bg->used) / static_cast<double>(bg->length) : 0.0;
    std::printf("  block group %llu %s, %s used of %s (%.0f%%)%s\n", static_cast<unsigned long long>(s),
                format::block_group_flags_to_string(bg->flags).c_str(), format_bytes(bg->used, units).c_str(),
                format_bytes(bg->length, units).c_str(), pct, left.c_str());
  }
}

int run_balance(const GlobalOptions& g, const BalanceArgs& a) {
  if (a.data)
    return usage_error(g, "-d (data block groups): fsctl relocates metadata only (-m, and -s for system block groups); "
                          "balance data with `btrfs balance start -d` on the mounted filesystem");
  for (const auto& d : a.devs)
    if (looks_like_filter(d))
      return usage_error(g, "'" + d + "' is a balance filter, not a device: filters attach to their option without a space, as in -m" +
                                d + " (or --metadata=" + d + ")");
  if (a.system && !a.metadata && !a.force)
    return usage_error(g, "balancing system block groups alone needs -f (as with btrfs balance)");
  if (!a.metadata && !a.system)
    return usage_error(g, "give -m (metadata block groups; -s for system ones); fsctl does not relocate data");
  relocation::BalanceOptions o;
  // As btrfs balance: -m without -s balances system block groups too, with
  // the metadata filters.
  for (auto [on, text, dst] : {std::tuple{a.metadata, &a.mfilters, &o.metadata}, std::tuple{a.system || a.metadata, a.system ? &a.sfilters : &a.mfilters, &o.system}}) {
    if (!on) continue;
    auto f = relocation::BalanceFilters::parse(*text);
    if (!f) return usage_error(g, f.error().message);
    *dst = *f;
  }
  StderrReporter rep(g);
  auto fs = open_read_write(a.devs, g, rep);
  if (!fs) return report_error(g, fs.error());
  const KeepUntilExit keep(*fs);  // no teardown of the cache at exit (keep_until_exit.h)

  // Quota state before: an inconsistent quota is reported, not silently kept.
  auto quota = qgroup::read_quota(**fs);
  if (!quota) return report_error(g, quota.error(), a.devs[0]);
  bool quota_on = quota->has_value() && (*quota)->on();
  bool verify = a.verify == "yes" || (a.verify == "auto" && quota_on);
  if (quota_on && ((*quota)->inconsistent() || (*quota)->rescan_running()))
    rep.warning("qgroup numbers are marked inconsistent before the balance; balance keeps them as they are: "
                "run `fsctl qgroup verify --repair` to make them right");

  o.batch = a.batch;
  o.force = a.force;
  o.dry_run = a.dry_run;
  auto shown = a.dry_run ? nullptr : stderr_progress(g, "balance", a.progress);
  o.progress = shown.get();
  InterruptScope signals;
  o.stop = signals.stop();
  auto r = relocation::balance_metadata(**fs, o);
  if (shown) shown->finish();
  if (!r) return report_error(g, r.error(), a.devs[0]);
  const auto& b = *r;
  if (!a.dry_run && b.commits == 0 && !b.interrupted) refresh_lagging_supers(**fs, rep);

  // Qgroups after the last commit: every number must still be right.
  std::optional<check::QgroupVerifyReport> qv;
  if (verify && !a.dry_run) {
    auto checking = stderr_progress(g, "balance: qgroup verify", a.progress);
    auto v = check::verify_qgroups(**fs, checking.get());
    if (checking) checking->finish();
    if (!v) return report_error(g, v.error(), a.devs[0]);
    qv = std::move(*v);
  }
  bool qgroups_ok = !qv || qv->ok();
  // Summaries print bytes unless a unit option is given.
  const UnitMode units = g.units_or(UNITS_RAW);

  if (g.format == Format::json) {
    json out = json_header("balance");
    out["dry_run"] = b.dry_run;
    // Per type: null for a type not balanced.
    out["filters"] = {{"metadata", o.metadata ? filters_json(a.mfilters, *o.metadata) : json(nullptr)},
                      {"system", o.system ? filters_json(a.system ? a.sfilters : a.mfilters, *o.system) : json(nullptr)}};
    out["block_groups_metadata"] = b.block_groups_metadata;
    out["block_groups_system"] = b.block_groups_system;
    out["block_groups_selected"] = b.block_groups_selected;
    out["block_groups_relocated"] = b.block_groups_relocated;
    out["block_groups_removed"] = b.block_groups_removed;
    out["block_groups_done"] = b.block_groups_removed;
    out["block_groups_total"] = b.block_groups_selected;
    out["tree_blocks_done"] = b.tree_blocks_done;
    out["tree_blocks_total"] = b.tree_blocks_total;
    json sel = json::array();
    for (u64 s : b.selected) sel.push_back(s);
    out["selected"] = sel;
    out["relocated_extents"] = b.relocation.relocated_extents;
    out["tree_blocks_copied"] = b.relocation.tree_blocks_copied;
    out["ancestors_copied"] = b.relocation.ancestors_copied;
    out["backrefs_remapped"] = b.relocation.backrefs_remapped;
    out["qgroup_dirty_extents"] = b.relocation.qgroup_dirty_extents;
    out["commits"] = b.commits;
    out["tree_blocks_written"] = b.tree_blocks_written;
    out["tree_blocks_written_early"] = b.tree_blocks_written_early;
    out["reserved_bytes"] = b.reserved_bytes;
    out["used_bytes"] = b.used_bytes;
    out["quota_enabled"] = quota_on;
    if (qv)
      out["qgroups"] = {{"verified", true}, {"consistent", qv->ok()}, {"mismatches", qv->mismatches}};
    else
      out["qgroups"] = {{"verified", false}};
    out["seconds"] = b.seconds;
    out["interrupted"] = b.interrupted;
    if (b.interrupted) out["state_note"] = b.state_note;
    out["whole_run_simulated"] = b.whole_run_simulated;
    out["not_relocated"] = not_relocated_json(b);
    out["chunks_created"] = chunks_created_json(b);
    std::cout << out.dump(2) << '\n';
  } else if (b.interrupted) {
    std::printf("interrupted (%s) after %llu commits: %s\n", InterruptScope::signal_name(),
                static_cast<unsigned long long>(b.commits), b.state_note.c_str());
  } else if (b.dry_run && b.whole_run_simulated) {
    std::printf("dry run (the whole balance, run on an in-memory copy): would relocate %llu of %llu selected block groups "
                "(%llu tree blocks copied) in %llu commits, using %s, reserving %s; nothing written\n",
                static_cast<unsigned long long>(b.block_groups_relocated), static_cast<unsigned long long>(b.block_groups_selected),
                static_cast<unsigned long long>(b.relocation.tree_blocks_copied), static_cast<unsigned long long>(b.commits),
                bytes_phrase(b.used_bytes, units).c_str(), bytes_phrase(b.reserved_bytes, units).c_str());
  } else if (b.dry_run) {
    std::printf("dry run: %llu of %llu metadata and system block groups selected; the first batch would relocate %llu tree blocks, reserving %s; nothing written\n",
                static_cast<unsigned long long>(b.block_groups_selected), static_cast<unsigned long long>(b.block_groups_metadata + b.block_groups_system),
                static_cast<unsigned long long>(b.relocation.relocated_extents), bytes_phrase(b.reserved_bytes, units).c_str());
  } else {
    std::printf("relocated %llu of %llu metadata and system block groups (%llu removed): %llu extents relocated, %llu tree blocks copied, "
                "%llu qgroup dirty extents, %llu commits, %s used (%s reserved) in %.3f s\n",
                static_cast<unsigned long long>(b.block_groups_relocated),
                static_cast<unsigned long long>(b.block_groups_metadata + b.block_groups_system), static_cast<unsigned long long>(b.block_groups_removed), static_cast<unsigned long long>(b.relocation.relocated_extents),
                static_cast<unsigned long long>(b.relocation.tree_blocks_copied),
                static_cast<unsigned long long>(b.relocation.qgroup_dirty_extents), static_cast<unsigned long long>(b.commits),
                bytes_phrase(b.used_bytes, units).c_str(), format_bytes(b.reserved_bytes, units).c_str(), b.seconds);
  }
  if (g.format == Format::text && b.dry_run && !b.interrupted) print_selected(**fs, b, units);
  if (g.format == Format::text && !b.interrupted) print_chunks_created(b, units);
  for (const auto& n : b.not_relocated)
    rep.warning("block group " + std::to_string(n.start) + " (" + format::block_group_flags_to_string(n.flags) + ")" +
                (b.dry_run ? " would not be relocated: " : " was not relocated: ") + n.reason);
  // Verified after the last commit, also of an interrupted run (never a dry run).
  if (g.format == Format::text && qv)
    std::printf("qgroups: %s\n", qv->ok() ? "verified, every number unchanged and right"
                                          : "MISMATCH after balance (run fsctl qgroup verify for the table)");
  if (!qgroups_ok) return EXIT_PROBLEMS;
  return b.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
}

}  // namespace

std::vector<std::string> rewrite_balance_args(int argc, char** argv) {
  // btrfs balance takes filters attached to -m/-s (getopt optional
  // arguments): "-musage=50". CLI11 has no optional attached values, so
  // "-mX" becomes "-m --mfilters=X" (likewise -s); -d in any spelling becomes
  // --data-requested, which the command refuses with a clear message.
  std::vector<std::string> out;
  bool in_balance = false, seen_command = false;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (!seen_command) {
      out.push_back(s);
      // The global options that take a value in the next argument.
      if ((s == "--format" || s == "--cache-size" || s == "--progress-interval") && i + 1 < argc) {
        out.push_back(argv[++i]);
      } else if (s.empty() || s[0] != '-') {
        seen_command = true;
        in_balance = s == "balance";
        // `btrfs balance start ...`: the same command here.
        if (in_balance && i + 1 < argc && std::string(argv[i + 1]) == "start") ++i;
      }
      continue;
    }
    if (in_balance && s.size() > 2 && s[0] == '-' && s[1] != '-' && (s[1] == 'm' || s[1] == 's')) {
      out.push_back(std::string("-") + s[1]);
      out.push_back(std::string("--") + s[1] + "filters=" + s.substr(2));
      continue;
    }
    if (in_balance && (s.rfind("--metadata=", 0) == 0 || s.rfind("--system=", 0) == 0)) {
      char c = s[2] == 'm' ? 'm' : 's';
      out.push_back(std::string("-") + c);
      out.push_back(std::string("--") + c + "filters=" + s.substr(s.find('=') + 1));
      continue;
    }
    if (in_balance && ((s.size() >= 2 && s[0] == '-' && s[1] == 'd') || s == "--data" || s.rfind("--data=", 0) == 0)) {
      out.push_back("--data-requested");
      continue;
    }
    out.push_back(s);
  }
  return out;
}

void register_balance(CLI::App& app, const GlobalOptions& g, Action& action) {
  auto* b = app.add_subcommand("balance", "Relocate metadata block groups offline, keeping every qgroup number exact (also spelled balance start)");
  auto a = std::make_shared<BalanceArgs>();
  b->add_flag("-m,--metadata", a->metadata, "Relocate metadata block groups; filters attached: -musage=50,limit=2");
  b->add_flag("-s,--system", a->system, "Relocate system block groups (with -f when given alone)");
  b->add_option("--mfilters", a->mfilters)->group("");
  b->add_option("--sfilters", a->sfilters)->group("");
  b->add_flag("--data-requested", a->data)->group("");
  b->add_flag("-f,--force", a->force, "Allow -s on its own, and convert= to a profile with fewer copies");
  b->add_flag("-n,--dry-run", a->dry_run, "Select, plan and reserve; write nothing");
  b->add_flag("-p", a->progress, "Progress lines on stderr also when it is not a terminal (the global --progress)");
  b->add_option("--batch", a->batch, "Block groups relocated per transaction (default: as many as --cache-size holds by used bytes)")
      ->check(CLI::Range(1, 1 << 20));
  b->add_option("--verify-qgroups", a->verify, "Verify qgroups after the last commit: auto (when quota is on), yes, no")
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  // Not required here: `balance cancel DEV...` and `balance status DEV...`
  // take their own devices.
  b->add_option("devices", a->devs, "All devices of the filesystem");
  CLI::App* cancel = register_balance_cancel(*b, g, action);
  CLI::App* status = register_balance_status(*b, g, action);
  b->callback([&g, &action, a, cancel, status] {
    if (cancel->parsed() || status->parsed()) return;
    if (a->devs.empty()) throw CLI::RequiredError("devices");
    action = [&g, a] { return run_balance(g, *a); };
  });
}

}  // namespace fsctl::cmd
