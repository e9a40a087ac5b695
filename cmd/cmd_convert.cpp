// SPDX-License-Identifier: GPL-2.0-only
// `fsctl convert --bg-tree | --no-bg-tree`: block group tree conversion.
#include <cstdio>
#include <iostream>

#include "cmd/commands.h"
#include "cmd/interrupt.h"
#include "cmd/leftover_report.h"
#include "cmd/keep_until_exit.h"
#include "convert/bg_tree.h"

namespace fsctl::cmd {
using json = nlohmann::ordered_json;

namespace {

int run_convert(const GlobalOptions& g, const std::vector<std::string>& devs, bool to_bgt, bool dry_run, u64 batch, bool progress) {
  StderrReporter rep(g);
  // A dry run opens like the real run (exclusive; a mounted filesystem is
  // refused) because its reservation probe needs a transaction, which a
  // read-only open cannot start; it never commits, so nothing is written.
  auto fs = open_read_write(devs, g, rep);
  if (!fs) return report_error(g, fs.error());
  const KeepUntilExit keep(*fs);  // no teardown of the cache at exit (keep_until_exit.h)
  const auto leftover = report_leftover_work(**fs, rep);
  convert::ConvertOptions o;
  o.direction = to_bgt ? convert::Direction::to_bg_tree : convert::Direction::to_extent_tree;
  o.dry_run = dry_run;
  o.batch = batch;
  auto shown = dry_run ? nullptr : stderr_progress(g, "convert", progress);
  o.progress = shown.get();
  InterruptScope signals;
  o.stop = signals.stop();
  auto r = convert::convert_bg_tree(**fs, o);
  if (shown) shown->finish();
  if (!r) return report_error(g, r.error(), devs[0]);
  const auto& c = *r;
  if (!dry_run && c.commits == 0 && !c.interrupted) refresh_lagging_supers(**fs, rep);
  const UnitMode units = g.units_or(UNITS_RAW);  // summaries: bytes unless a unit option is given
  if (g.format == Format::json) {
    json out = json_header("convert");
    out["direction"] = to_bgt ? "to-bg-tree" : "to-extent-tree";
    out["dry_run"] = dry_run;
    out["state_before"] = c.state_before;
    out["state_after"] = c.state_after;
    out["already_done"] = c.already_done;
    out["resumed"] = c.resumed;
    out["reverting"] = c.reverting;
    out["block_groups_total"] = c.block_groups_total;
    out["block_groups_to_move"] = c.block_groups_to_move;
    out["block_groups_moved"] = c.block_groups_moved;
    out["block_groups_already_moved"] = c.block_groups_already_moved;
    out["block_groups_done"] = c.block_groups_done;
    out["commits"] = c.commits;
    out["batch"] = c.batch;
    out["tree_blocks_written"] = c.tree_blocks_written;
    out["tree_blocks_written_early"] = c.tree_blocks_written_early;
    out["estimated_new_tree_blocks"] = c.estimated_tree_blocks;
    out["reserved_bytes"] = c.reserved_bytes;
    out["used_bytes"] = c.used_bytes;
    out["set_no_holes"] = c.set_no_holes;
    out["seconds"] = c.seconds;
    out["interrupted"] = c.interrupted;
    if (c.interrupted) out["state_note"] = c.state_note;
    out["leftover_work"] = leftover_work_json(leftover);
    std::cout << out.dump(2) << '\n';
    return c.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
  }
  if (c.interrupted) {
    std::printf("interrupted (%s) after %llu commits: %s\n", InterruptScope::signal_name(),
                static_cast<unsigned long long>(c.commits), c.state_note.c_str());
    return EXIT_INTERRUPTED;
  }
  if (c.already_done) {
    std::cout << "nothing to do: block group items are already in the "
              << (to_bgt ? "block group tree" : "extent tree") << '\n';
    return EXIT_OK;
  }
  if (dry_run) {
    if (c.reverting)
      std::printf("dry run: taking back a half conversion %s (%llu block groups to move back)\n",
                  to_bgt ? "to the extent tree" : "to the block group tree",
                  static_cast<unsigned long long>(c.block_groups_to_move));
    if (c.resumed)
      std::printf("dry run: resuming a half conversion (%llu of %llu block groups already moved)\n",
                  static_cast<unsigned long long>(c.block_groups_already_moved),
                  static_cast<unsigned long long>(c.block_groups_total));
    std::printf("dry run: would move %llu block group items to the %s, new tree about %llu blocks, reserving %s; nothing written\n",
                static_cast<unsigned long long>(c.block_groups_to_move), to_bgt ? "block group tree" : "extent tree",
                static_cast<unsigned long long>(c.estimated_tree_blocks), bytes_phrase(c.reserved_bytes, units).c_str());
    return EXIT_OK;
  }
  if (c.reverting) {
    std::printf("took back the half conversion %s: moved %llu block group items back to the %s in %llu commits (%llu tree blocks written, %s used, %s reserved) in %.3f s\n",
                to_bgt ? "to the extent tree" : "to the block group tree", static_cast<unsigned long long>(c.block_groups_moved),
                to_bgt ? "block group tree" : "extent tree", static_cast<unsigned long long>(c.commits),
                static_cast<unsigned long long>(c.tree_blocks_written), bytes_phrase(c.used_bytes, units).c_str(),
                format_bytes(c.reserved_bytes, units).c_str(), c.seconds);
    return EXIT_OK;
  }
  std::printf("%s%s: moved %llu block group items in %llu commits (%llu tree blocks written, %s used, %s reserved) in %.3f s%s\n",
              c.resumed ? "resumed " : "", to_bgt ? "convert to block group tree" : "convert to extent tree",
              static_cast<unsigned long long>(c.block_groups_moved), static_cast<unsigned long long>(c.commits),
              static_cast<unsigned long long>(c.tree_blocks_written), bytes_phrase(c.used_bytes, units).c_str(),
              format_bytes(c.reserved_bytes, units).c_str(), c.seconds, c.set_no_holes ? "; set NO_HOLES" : "");
  return EXIT_OK;
}

}  // namespace

void register_convert(CLI::App& app, const GlobalOptions& g, Action& action) {
  auto* cv = app.add_subcommand("convert", "Convert block group items between the extent tree and the block group tree");
  auto devs = std::make_shared<std::vector<std::string>>();
  auto to = std::make_shared<bool>(false);
  auto from = std::make_shared<bool>(false);
  auto dry = std::make_shared<bool>(false);
  auto batch = std::make_shared<u64>(1024);
  // The long names are btrfstune's (btrfstune --convert-to-block-group-tree).
  auto* o1 = cv->add_flag("--bg-tree,--convert-to-block-group-tree", *to,
                          "Move block group items into the block group tree (compat_ro block_group_tree)");
  auto* o2 = cv->add_flag("--no-bg-tree,--convert-from-block-group-tree", *from, "Move block group items back into the extent tree");
  o1->excludes(o2);
  cv->add_flag("-n,--dry-run", *dry, "Say what would be done; write nothing");
  auto progress = std::make_shared<bool>(false);
  cv->add_option("--batch", *batch, "Block groups moved per commit (default 1024)")->check(CLI::Range(1, 1 << 20));
  cv->add_flag("-p", *progress, "Progress lines on stderr also when it is not a terminal (the global --progress)");
  cv->add_option("devices", *devs, "All devices of the filesystem")->required();
  cv->callback([&g, &action, devs, to, from, dry, batch, progress] {
    if (!*to && !*from) throw CLI::ValidationError("convert", "give --bg-tree (--convert-to-block-group-tree) or --no-bg-tree (--convert-from-block-group-tree)");
    action = [&g, devs, to, dry, batch, progress] { return run_convert(g, *devs, *to, *dry, *batch, *progress); };
  });
}

}  // namespace fsctl::cmd
