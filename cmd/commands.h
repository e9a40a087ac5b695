// SPDX-License-Identifier: GPL-2.0-only
// Registration of each command group with the CLI11 app.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

#include "cmd/output.h"

namespace fsctl::cmd {

/// The action a parsed subcommand runs; returns the exit code.
using Action = std::function<int()>;

/// Adds `inspect` and its subcommands; sets `action` when one is chosen.
void register_inspect(CLI::App& app, const GlobalOptions& g, Action& action);

}  // namespace fsctl::cmd
