// SPDX-License-Identifier: GPL-2.0-only
// JSON members shared by several reports: bg_tree_state, quota status, qgroup id lists.
#include "cmd/json_members.h"

namespace fsctl::cmd {
using json = nlohmann::ordered_json;

json bg_tree_state_json(const fs::BgTreeState& st) {
  return json{{"state", st.describe()},
              {"compat_ro_block_group_tree", st.has_bg_tree_bit},
              {"changing_bg_tree", st.changing},
              {"bg_tree_exists", st.bg_tree_exists},
              {"in_block_group_tree", st.in_bg_tree},
              {"in_extent_tree", st.in_extent_tree}};
}

json quota_status_json(const qgroup::QuotaState& q) {
  return json{{"mode", q.mode_name()},
              {"enable_gen", q.simple_quota ? json(q.squota_enable_gen()) : json(nullptr)},
              {"flags", q.flags},
              {"generation", q.generation},
              {"rescan", q.rescan_running() ? json(q.rescan) : json(nullptr)},
              {"inconsistent", q.inconsistent()},
              {"rescan_running", q.rescan_running()}};
}

json qgroupids_json(const std::set<u64>& ids) {
  json arr = json::array();
  for (u64 id : ids) arr.push_back(qgroup::qgroupid_to_string(id));
  return arr;
}

}  // namespace fsctl::cmd
