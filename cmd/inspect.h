// SPDX-License-Identifier: GPL-2.0-only
// The subcommands of `fsctl inspect` (cmd/inspect_*.cpp), each adding itself
// to the `inspect` subcommand that register_inspect (cmd/commands.h) made.
#pragma once
#include <CLI/CLI.hpp>

#include "cmd/commands.h"

namespace fsctl::cmd {

/// `inspect dump-super`: the superblock of each device (cmd/inspect_dump_super.cpp).
void register_inspect_dump_super(CLI::App* inspect, const GlobalOptions& g, Action& action);
/// `inspect dump-tree`: tree blocks with decoded items (cmd/inspect_dump_tree.cpp).
void register_inspect_dump_tree(CLI::App* inspect, const GlobalOptions& g, Action& action);
/// `inspect tree-stats`: the shape of every tree (cmd/inspect_tree_stats.cpp).
void register_inspect_tree_stats(CLI::App* inspect, const GlobalOptions& g, Action& action);
/// `inspect block-groups`: block groups and their items' tree (cmd/inspect_block_groups.cpp).
void register_inspect_block_groups(CLI::App* inspect, const GlobalOptions& g, Action& action);

}  // namespace fsctl::cmd
