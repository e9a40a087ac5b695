// SPDX-License-Identifier: GPL-2.0-only
// The report of a one-commit job (quota disable and enable, balance cancel):
// the same JSON members and the same text for what the commit did, in every
// such command.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "cmd/units.h"
#include "lib/transaction/batch_runner.h"

namespace fsctl::cmd {

/// Adds wrote, transid (null unless wrote), reserved_bytes, used_bytes,
/// tree_blocks_written, rehearsed, interrupted and, when interrupted,
/// state_note to `out` (docs/json: the schemas of those commands).
void put_one_commit_json(nlohmann::ordered_json& out, const transaction::OneCommit& c);

/// When `c` was interrupted: prints "interrupted (SIGNAL) before the commit:
/// nothing was written" on stdout and returns true.
bool print_if_interrupted(const transaction::OneCommit& c);

/// "N tree blocks written, X used of Y reserved" in `units`.
[[nodiscard]] std::string one_commit_numbers(const transaction::OneCommit& c, UnitMode units);

}  // namespace fsctl::cmd
