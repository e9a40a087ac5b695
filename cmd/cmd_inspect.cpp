// SPDX-License-Identifier: GPL-2.0-only
// `fsctl inspect`: the command group. Its subcommands dump-super, dump-tree,
// tree-stats and block-groups live in cmd/inspect_*.cpp, one file each; each
// parses options, calls the library, renders text (stdout) or JSON (stdout).
#include "cmd/commands.h"
#include "cmd/inspect.h"

namespace fsctl::cmd {

void register_inspect(CLI::App& app, const GlobalOptions& g, Action& action) {
  auto* inspect = app.add_subcommand("inspect", "Read-only dumps of an unmounted filesystem");
  inspect->require_subcommand(1);

  register_inspect_dump_super(inspect, g, action);
  register_inspect_dump_tree(inspect, g, action);
  register_inspect_tree_stats(inspect, g, action);
  register_inspect_block_groups(inspect, g, action);
}

}  // namespace fsctl::cmd
