// SPDX-License-Identifier: GPL-2.0-only
// Registration of each command group with the CLI11 app.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

#include "cmd/output.h"
#include "lib/fs/fs_info.h"

namespace fsctl::cmd {

/// The action a parsed subcommand runs; returns the exit code.
using Action = std::function<int()>;

/// Adds `inspect` and its subcommands; sets `action` when one is chosen.
void register_inspect(CLI::App& app, const GlobalOptions& g, Action& action);
/// Adds `inspect usage` to the `inspect` group (cmd_inspect_usage.cpp).
void register_inspect_usage(CLI::App& inspect, const GlobalOptions& g, Action& action);
/// Adds `inspect dump-super` (cmd_inspect_dump_super.cpp).
void register_inspect_dump_super(CLI::App& inspect, const GlobalOptions& g, Action& action);
/// Adds `inspect dump-tree` (cmd_inspect_dump_tree.cpp).
void register_inspect_dump_tree(CLI::App& inspect, const GlobalOptions& g, Action& action);
/// Adds `inspect tree-stats` (cmd_inspect_tree_stats.cpp).
void register_inspect_tree_stats(CLI::App& inspect, const GlobalOptions& g, Action& action);
/// Adds `inspect block-groups` (cmd_inspect_block_groups.cpp).
void register_inspect_block_groups(CLI::App& inspect, const GlobalOptions& g, Action& action);
/// Adds `check`.
void register_check(CLI::App& app, const GlobalOptions& g, Action& action);
/// Adds `convert --bg-tree | --no-bg-tree`.
void register_convert(CLI::App& app, const GlobalOptions& g, Action& action);
/// Adds `qgroup show` and `qgroup verify`.
void register_qgroup(CLI::App& app, const GlobalOptions& g, Action& action);
/// Adds `quota disable` and `quota enable`.
void register_quota(CLI::App& app, const GlobalOptions& g, Action& action);
/// Adds `rescue finish-drop`.
void register_rescue(CLI::App& app, const GlobalOptions& g, Action& action);
/// `fsctl balance` (and its `cancel`).
void register_balance(CLI::App& app, const GlobalOptions& g, Action& action);
/// Adds `cancel` to the `balance` command (cmd_balance_cancel.cpp); returns it.
CLI::App* register_balance_cancel(CLI::App& balance, const GlobalOptions& g, Action& action);
/// Adds `status` to the `balance` command (cmd_balance_status.cpp); returns it.
CLI::App* register_balance_status(CLI::App& balance, const GlobalOptions& g, Action& action);
/// argv[1..] for CLI11, with btrfs balance's spellings: "balance start" is
/// "balance"; attached filters ("-musage=50") split into
/// "-m --mfilters=usage=50" (also -s); any -d/--data spelling becomes the
/// hidden "--data-requested" (refused by the command with a usage error).
[[nodiscard]] std::vector<std::string> rewrite_balance_args(int argc, char** argv);

/// When `args` (argv[1..]) name a command or subcommand `app` does not have:
/// the message ("unknown command 'balanse'; did you mean 'balance'?"),
/// else nullopt. Options and their values are skipped; stops at the first
/// positional of a command without subcommands, and at -h/--help/--version.
[[nodiscard]] std::optional<std::string> unknown_command(const CLI::App& app, const std::vector<std::string>& args);

/// Opens a filesystem read-only for a command: warns about mounted devices,
/// unknown incompat bits and a log tree needing replay.
[[nodiscard]] Result<std::unique_ptr<fs::FsInfo>> open_read_only(const std::vector<std::string>& devs,
                                                                 const GlobalOptions& g, Reporter& rep,
                                                                 bool load_block_groups);
/// Opens a filesystem for writing: refuses a mounted device (Errc::busy),
/// loads block groups.
[[nodiscard]] Result<std::unique_ptr<fs::FsInfo>> open_read_write(const std::vector<std::string>& devs,
                                                                  const GlobalOptions& g, Reporter& rep);

/// After a write command that committed nothing: rewrites superblock copies
/// found lagging at open with one empty commit
/// (transaction::rewrite_lagging_supers) and says so as a notice, or warns
/// when that commit fails (the command's own result stands).
void refresh_lagging_supers(fs::FsInfo& fs, Reporter& rep);

}  // namespace fsctl::cmd
