// SPDX-License-Identifier: GPL-2.0-only
// Reporting unfinished kernel work (lib/fs/leftover_work.h) the same way in
// every command: a NOTE per kind on stderr, one JSON object in the report.
#pragma once
#include <nlohmann/json.hpp>

#include "lib/base/reporter.h"
#include "lib/fs/leftover_work.h"

namespace fsctl::cmd {

/// Finds the leftover work of `fs` and writes one notice per kind to `rep`
/// (dropping subvolumes left out when `with_dropping` is false: qgroup
/// verify names them per qgroup). A read error becomes a warning and an
/// empty result: reporting never stops a command.
fs::LeftoverWork report_leftover_work(fs::FsInfo& fs, Reporter& rep, bool with_dropping = true);

/// {"balance_paused": bool, "balance_types": [..] or null,
///  "relocation_trees": [subvolume ids], "dropping_subvolumes":
///  [{"root_id", "started", "drop_level"}]}
[[nodiscard]] nlohmann::ordered_json leftover_work_json(const fs::LeftoverWork& work);

}  // namespace fsctl::cmd
