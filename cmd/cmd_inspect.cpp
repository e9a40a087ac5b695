// SPDX-License-Identifier: GPL-2.0-only
// `fsctl inspect`: the read-only dumps, one file per subcommand
// (cmd_inspect_<subcommand>.cpp); this file adds the group and each of them
// in the order `fsctl inspect --help` lists them.
#include "cmd/commands.h"

namespace fsctl::cmd {

void register_inspect(CLI::App& app, const GlobalOptions& g, Action& action) {
  auto* inspect = app.add_subcommand("inspect", "Read-only dumps of an unmounted filesystem");
  inspect->require_subcommand(1);
  register_inspect_usage(*inspect, g, action);
  register_inspect_dump_super(*inspect, g, action);
  register_inspect_dump_tree(*inspect, g, action);
  register_inspect_tree_stats(*inspect, g, action);
  register_inspect_block_groups(*inspect, g, action);
}

}  // namespace fsctl::cmd
