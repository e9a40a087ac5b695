// SPDX-License-Identifier: GPL-2.0-only
// JSON members that more than one report has, built in one place so that
// they have one shape everywhere (docs/json/common.schema.json "$defs").
#pragma once
#include <set>

#include <nlohmann/json.hpp>

#include "lib/fs/fs_info.h"
#include "lib/qgroup/qgroup.h"

namespace fsctl::cmd {

/// "bg_tree_state" of `inspect block-groups` and `check`: {"state",
/// "compat_ro_block_group_tree", "changing_bg_tree", "bg_tree_exists",
/// "in_block_group_tree", "in_extent_tree"}.
[[nodiscard]] nlohmann::ordered_json bg_tree_state_json(const fs::BgTreeState& st);

/// "status" of `qgroup show` and `qgroup verify`: the QGROUP_STATUS item;
/// "rescan" is the rescan progress (an objectid) while a rescan runs, else null.
[[nodiscard]] nlohmann::ordered_json quota_status_json(const qgroup::QuotaState& q);

/// Qgroup ids as a JSON array of "level/id" strings, ascending.
[[nodiscard]] nlohmann::ordered_json qgroupids_json(const std::set<u64>& ids);

}  // namespace fsctl::cmd
