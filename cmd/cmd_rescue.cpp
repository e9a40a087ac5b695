// SPDX-License-Identifier: GPL-2.0-only
// `fsctl rescue finish-drop DEV...`: finishes the deletion of subvolumes
// offline (the kernel cleaner's drop of deleted subvolumes,
// lib/rescue/finish_drop.h), for a filesystem whose mount cannot finish it
// (runs out of memory or time with quota on, or fails).
#include <cstdio>
#include <iostream>

#include "cmd/commands.h"
#include "cmd/interrupt.h"
#include "cmd/leftover_report.h"
#include "cmd/units.h"
#include "lib/format/names.h"
#include "lib/qgroup/qgroup.h"
#include "lib/rescue/finish_drop.h"

namespace fsctl::cmd {
using json = nlohmann::ordered_json;

namespace {

struct FinishDropArgs {
  std::vector<std::string> devs;
  bool dry_run = false;
  u64 batch = 8192;
  bool progress = false;
};

json roots_json(const rescue::FinishDropResult& r) {
  json roots = json::array();
  for (const auto& d : r.roots)
    roots.push_back({{"root_id", d.key.objectid},
                     {"started", d.started},
                     {"drop_progress", d.started ? json(format::key_to_string(d.drop_progress)) : json(nullptr)},
                     {"drop_level", d.drop_level},
                     {"orphan_item", d.orphan_item},
                     {"dropped", d.dropped}});
  return roots;
}

json stats_json(const transaction::DropStats& s) {
  return {{"tree_blocks_freed", s.tree_blocks_freed},
          {"shared_blocks_left", s.shared_blocks_left},
          {"blocks_to_full_backref", s.blocks_to_full_backref},
          {"data_refs_dropped", s.data_refs_dropped},
          {"data_extents_freed", s.data_extents_freed},
          {"data_bytes_freed", s.data_bytes_freed}};
}

json qgroups_json(const rescue::FinishDropResult& r) {
  if (!r.qgroups) return nullptr;
  json removed = json::array();
  for (u64 id : r.qgroups_removed) removed.push_back(qgroup::qgroupid_to_string(id));
  return {{"wrote", r.qgroups->wrote},
          {"transid", r.qgroups->wrote ? json(r.qgroups->transid) : json(nullptr)},
          {"qgroups_updated", r.qgroups->qgroups_updated},
          {"qgroups_removed", removed},
          {"status_fixed", r.qgroups->status_fixed}};
}

std::string state_note(const rescue::FinishDropResult& r) {
  std::size_t dropped = 0;
  for (const auto& d : r.roots) dropped += d.dropped;
  return std::to_string(dropped) + " of " + std::to_string(r.roots.size()) +
         " deleted subvolumes dropped; the filesystem is consistent at its last commit: rerun `fsctl rescue finish-drop` to go on "
         "(or mount: the kernel's cleaner resumes the drop)" +
         (r.quota ? "; qgroups stay marked inconsistent until the rerun ends" : "");
}

void print_text(const rescue::FinishDropResult& r, bool dry_run, UnitMode units) {
  for (const auto& d : r.roots)
    std::printf("subvolume %llu: deleted, %s%s%s\n", static_cast<unsigned long long>(d.key.objectid),
                d.started ? ("half dropped (drop_progress " + format::key_to_string(d.drop_progress) + " level " +
                             std::to_string(d.drop_level) + ")")
                                .c_str()
                          : "not dropped yet",
                dry_run ? "" : (d.dropped ? ": dropped" : ": not finished"), d.orphan_item ? "" : " (no orphan item)");
  const auto& s = r.stats;
  std::printf("%s %llu tree blocks and %llu data extents (%s); %llu shared blocks left to other trees (%llu switched to full "
              "backrefs first); %llu data references dropped\n",
              dry_run ? "dry run: would free" : "freed", static_cast<unsigned long long>(s.tree_blocks_freed),
              static_cast<unsigned long long>(s.data_extents_freed), bytes_phrase(s.data_bytes_freed, units).c_str(),
              static_cast<unsigned long long>(s.shared_blocks_left), static_cast<unsigned long long>(s.blocks_to_full_backref),
              static_cast<unsigned long long>(s.data_refs_dropped));
  if (dry_run) {
    std::printf("dry run: %llu commits, reserving %s; nothing written\n", static_cast<unsigned long long>(r.run.commits),
                bytes_phrase(r.run.reserved_bytes, units).c_str());
    return;
  }
  std::printf("%llu commits, %llu tree blocks written, %s used of %s reserved\n", static_cast<unsigned long long>(r.run.commits),
              static_cast<unsigned long long>(r.run.tree_blocks_written), bytes_phrase(r.run.used_bytes, units).c_str(),
              bytes_phrase(r.run.reserved_bytes, units).c_str());
  if (r.qgroups) {
    std::string removed;
    for (u64 id : r.qgroups_removed) removed += (removed.empty() ? "" : ", ") + qgroup::qgroupid_to_string(id);
    if (r.qgroups->wrote)
      std::printf("qgroups: recomputed from the trees, transaction %llu rewrote %llu%s%s\n",
                  static_cast<unsigned long long>(r.qgroups->transid), static_cast<unsigned long long>(r.qgroups->qgroups_updated),
                  removed.empty() ? "" : (" and removed " + removed).c_str(), r.qgroups->status_fixed ? ", status consistent" : "");
    else
      std::printf("qgroups: recomputed from the trees, all right\n");
  }
}

int run_finish_drop(const GlobalOptions& g, const FinishDropArgs& a) {
  StderrReporter rep(g);
  auto fs = open_read_write(a.devs, g, rep);
  if (!fs) return report_error(g, fs.error());
  // The deleted subvolumes are this command's work: no note about them.
  const auto leftover = report_leftover_work(**fs, rep, false);
  rescue::FinishDropOptions o;
  o.dry_run = a.dry_run;
  o.batch = a.batch;
  auto shown = a.dry_run ? nullptr : stderr_progress(g, "finish-drop", a.progress);
  o.progress = shown.get();
  InterruptScope signals;
  o.stop = signals.stop();
  auto r = rescue::finish_drop(**fs, o);
  if (shown) shown->finish();
  if (!r) return report_error(g, r.error(), a.devs[0]);
  const auto& d = *r;
  if (!a.dry_run && d.run.commits == 0 && !d.qgroups && !d.interrupted) refresh_lagging_supers(**fs, rep);
  const UnitMode units = g.units_or(UNITS_RAW);
  if (g.format == Format::json) {
    json out = json_header("rescue finish-drop");
    out["dry_run"] = a.dry_run;
    out["subvolumes"] = roots_json(d);
    out["drop"] = stats_json(d.stats);
    out["commits"] = d.run.commits;
    out["tree_blocks_written"] = d.run.tree_blocks_written;
    out["reserved_bytes"] = d.run.reserved_bytes;
    out["used_bytes"] = d.run.used_bytes;
    out["rehearsed"] = d.run.rehearsed;
    out["quota"] = d.quota;
    out["qgroups"] = qgroups_json(d);
    out["interrupted"] = d.interrupted;
    if (d.interrupted) out["state_note"] = state_note(d);
    out["leftover_work"] = leftover_work_json(leftover);
    std::cout << out.dump(2) << '\n';
    return d.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
  }
  if (d.roots.empty() && !d.qgroups) {
    std::cout << "no deleted subvolume is waiting to be dropped: nothing to do\n";
    return EXIT_OK;
  }
  print_text(d, a.dry_run, units);
  if (d.interrupted) {
    std::printf("interrupted (%s): %s\n", InterruptScope::signal_name(), state_note(d).c_str());
    return EXIT_INTERRUPTED;
  }
  return EXIT_OK;
}

}  // namespace

void register_rescue(CLI::App& app, const GlobalOptions& g, Action& action) {
  auto* rescue = app.add_subcommand("rescue", "Finish work the kernel left on an unmounted filesystem (btrfs rescue, offline)");
  rescue->require_subcommand(1);
  auto* fd = rescue->add_subcommand("finish-drop", "Finish dropping deleted subvolumes (the kernel cleaner's work), qgroups exact");
  auto a = std::make_shared<FinishDropArgs>();
  fd->add_flag("-n,--dry-run", a->dry_run, "Say what would be done; write nothing");
  fd->add_option("--batch", a->batch, "Tree blocks dropped per commit at most (default 8192)")->check(CLI::PositiveNumber);
  fd->add_flag("-p", a->progress, "Progress lines on stderr also when it is not a terminal (the global --progress)");
  fd->add_option("devices", a->devs, "All devices of the filesystem")->required();
  fd->callback([&g, &action, a] { action = [&g, a] { return run_finish_drop(g, *a); }; });
}

}  // namespace fsctl::cmd
