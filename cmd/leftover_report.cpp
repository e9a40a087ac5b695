// SPDX-License-Identifier: GPL-2.0-only
// Unfinished kernel work in text and JSON (leftover_report.h).
#include "cmd/leftover_report.h"

#include "lib/format/balance_item.h"

namespace fsctl::cmd {

fs::LeftoverWork report_leftover_work(fs::FsInfo& fs, Reporter& rep, bool with_dropping) {
  auto work = fs::find_leftover_work(fs);
  if (!work) {
    rep.warning("unfinished kernel work not checked: " + work.error().message);
    return {};
  }
  fs::LeftoverWork shown = *work;
  if (!with_dropping) shown.dropping.clear();
  for (const auto& line : fs::describe_leftover_work(shown)) rep.notice(line);
  return *work;
}

nlohmann::ordered_json leftover_work_json(const fs::LeftoverWork& work) {
  using json = nlohmann::ordered_json;
  json types = nullptr;
  if (work.balance_flags) {
    types = json::array();
    for (std::string_view name : format::balance_type_names(*work.balance_flags)) types.push_back(name);
  }
  json dropping = json::array();
  for (const auto& d : work.dropping)
    dropping.push_back({{"root_id", d.root_id}, {"started", d.started}, {"drop_level", d.drop_level}});
  return {{"balance_paused", work.balance_flags.has_value()}, {"balance_types", types},
          {"relocation_trees", work.relocation_trees}, {"dropping_subvolumes", dropping}};
}

}  // namespace fsctl::cmd
