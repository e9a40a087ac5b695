// SPDX-License-Identifier: GPL-2.0-only
// fsctl entry point: global options (--format, -v, -q, --progress, --cache-size, units), command
// dispatch, and the only place that catches exceptions and maps them to exit
// codes (STYLE.md "Errors"). The environment's test hooks (env_hooks.h) are
// read here, once; a command stopped by the fail point exits FAIL_POINT_EXIT.
#include <algorithm>
#include <iostream>
#include <new>

#include "cmd/commands.h"
#include "cmd/env_hooks.h"
#include "cmd/heap_pages.h"
#include "cmd/output.h"
#include "cmd/version.h"
#include "lib/base/release_memory.h"

int main(int argc, char** argv) {
  using namespace fsctl::cmd;
  reexec_with_heap_hugepages(argv);  // first: huge pages for the heap, or on as it was (heap_pages.h)
  fsctl::limit_heap_retention();  // before any thread: one malloc arena (release_memory.h)
  GlobalOptions g;
  CLI::App app{"fsctl - offline maintenance for unmounted btrfs filesystems"};
  app.name("fsctl");
  app.require_subcommand(1);
  app.fallthrough();  // global options are accepted after the subcommand too
  std::string format = "text";
  std::string cache_size = "192M";
  app.add_option("--format", format, "Output format: text or json")->check(CLI::IsMember({"text", "json"}));
  app.add_flag("-v,--verbose", g.verbose, "More detail (repeatable)");
  app.add_flag("-q,--quiet", g.quiet, "Only errors and results");
  app.add_option("--cache-size", cache_size, "Memory budget for cached tree blocks and I/O buffers (default 192M; peak memory stays within it + 64 MiB)");
  app.add_flag("--progress", g.progress,
               "Progress lines on stderr also when it is not a terminal (systemd, cron); a terminal always gets a redrawn line unless -q");
  app.add_option("--progress-interval", g.progress_interval, "Seconds between --progress lines (default 1; 0: every update)")
      ->check(CLI::Range(0.0, 86400.0));
  app.set_version_flag("--version", std::string("fsctl ") + VERSION);
  // Unit options of btrfs-progs for sizes in text tables and summaries (JSON
  // stays in bytes). Only the long forms: -m is balance's. Their order
  // matters (--si --kbytes), so unit_mode_from_args reads them from the
  // arguments; the flags here make CLI11 accept them and list them.
  const char* unit_help[] = {"Sizes in bytes", "Sizes human readable, base 1024 (default of qgroup show)",
                             "Base 1024 units (KiB, MiB, ...)", "Base 1000 units (kB, MB, ...)",
                             "Sizes in KiB (kB with --si)", "Sizes in MiB (MB with --si)",
                             "Sizes in GiB (GB with --si)", "Sizes in TiB (TB with --si)"};
  for (std::size_t i = 0; i < unit_option_names().size(); ++i)
    app.add_flag(unit_option_names()[i])->description(unit_help[i])->group("Size units (text output)");

  Action action;
  register_inspect(app, g, action);
  register_qgroup(app, g, action);
  register_quota(app, g, action);
  register_convert(app, g, action);
  register_check(app, g, action);
  register_balance(app, g, action);
  register_rescue(app, g, action);

  // The command as far as CLI11 has parsed it: "qgroup show".
  auto command_of = [&app] {
    std::string op;
    for (const CLI::App* a = &app; !a->get_subcommands().empty();) {
      a = a->get_subcommands().front();
      op += (op.empty() ? "" : " ") + a->get_name();
    }
    return op;
  };
  // A command line that does not parse: the error document too when JSON
  // was asked for (read from the arguments, as they did not parse).
  std::vector<std::string> args = rewrite_balance_args(argc, argv);
  const bool json_asked = json_format_requested(args);
  try {
    if (auto unknown = unknown_command(app, args)) {
      std::cerr << "ERROR: " << *unknown << '\n';
      if (json_asked) print_error_document("", EXIT_USAGE, "usage", *unknown);
      return EXIT_USAGE;
    }
    g.units = unit_mode_from_args(args);
    // CLI11 takes a vector of arguments in reverse order.
    std::reverse(args.begin(), args.end());
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    if (rc == 0) return EXIT_OK;  // --help, --version
    if (json_asked) print_error_document(command_of(), EXIT_USAGE, "usage", e.what());
    return EXIT_USAGE;
  }
  // The operation's name in the reservation test log and the JSON header: the subcommands.
  const std::string op = command_of();
  g.command = op;
  // The devices of the command (every command has a "devices" positional).
  const CLI::App* leaf = &app;
  while (!leaf->get_subcommands().empty()) leaf = leaf->get_subcommands().front();
  for (const CLI::Option* o : leaf->get_options())
    if (o->get_name() == "devices") g.devices = o->results();
  const EnvHooks hooks = EnvHooks::from_environment(op);
  g.hooks = &hooks;
  g.format = format == "json" ? Format::json : Format::text;
  auto cs = parse_size(cache_size);
  if (!cs || *cs < (1u << 20))
    return usage_error(g, "invalid --cache-size '" + cache_size + "' (at least 1M, e.g. 192M)");
  g.cache_bytes = *cs;
  try {
    int rc = action ? action() : EXIT_USAGE;
    // The command failed at the first write after the fail point (or, when
    // the N-th write was its last, at the flush after it): as the process
    // ended by the fail point before, exactly N write requests were made.
    return hooks.fail_point_reached() ? FAIL_POINT_EXIT : rc;
  } catch (const std::bad_alloc&) {
    std::cerr << "ERROR: out of memory\n";
    if (g.format == Format::json) print_error_document(op, EXIT_CORRUPT, "out_of_memory", "out of memory");
    return EXIT_CORRUPT;
  } catch (const std::exception& e) {
    std::cerr << "ERROR: internal error: " << e.what() << '\n';
    if (g.format == Format::json) print_error_document(op, EXIT_CORRUPT, "internal", std::string("internal error: ") + e.what());
    return EXIT_CORRUPT;
  }
}
