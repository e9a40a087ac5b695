// SPDX-License-Identifier: GPL-2.0-only
// One-commit job reports (one_commit_report.h).
#include "cmd/one_commit_report.h"

#include <cstdio>

#include "cmd/interrupt.h"

namespace fsctl::cmd {

void put_one_commit_json(nlohmann::ordered_json& out, const transaction::OneCommit& c) {
  out["wrote"] = c.wrote;
  out["transid"] = c.wrote ? nlohmann::ordered_json(c.transid) : nlohmann::ordered_json(nullptr);
  out["reserved_bytes"] = c.reserved_bytes;
  out["used_bytes"] = c.used_bytes;
  out["tree_blocks_written"] = c.blocks_written;
  out["rehearsed"] = c.rehearsed;
  out["interrupted"] = c.interrupted;
  if (c.interrupted) out["state_note"] = "nothing was written";
}

bool print_if_interrupted(const transaction::OneCommit& c) {
  if (!c.interrupted) return false;
  std::printf("interrupted (%s) before the commit: nothing was written\n", InterruptScope::signal_name());
  return true;
}

std::string one_commit_numbers(const transaction::OneCommit& c, UnitMode units) {
  return std::to_string(c.blocks_written) + " tree blocks written, " + bytes_phrase(c.used_bytes, units) + " used of " +
         format_bytes(c.reserved_bytes, units) + " reserved";
}

}  // namespace fsctl::cmd
