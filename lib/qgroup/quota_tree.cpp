// SPDX-License-Identifier: GPL-2.0-only
// Reading the quota tree (read_quota: QGROUP_STATUS/INFO/LIMIT/RELATION items;
// qgroupid text). Scans from the first key (0,0,0) over every leaf:
// the btrfs-progs checker starts a pass at a later key and misses leaves when
// the quota tree has more than one (FORMAT.md section 2).
#include <cstdio>

#include "lib/ctree/search.h"
#include "lib/format/qgroup_items.h"
#include "lib/qgroup/qgroup.h"

namespace fsctl::qgroup {
using namespace fsctl::format;

std::string qgroupid_to_string(u64 id) { return format::qgroupid_to_string(id); }

std::optional<u64> parse_qgroupid(const std::string& s) {
  unsigned long long level = 0, id = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%llu/%llu%c", &level, &id, &extra) == 2 && level < (1ULL << 16) && id < (1ULL << 48))
    return (static_cast<u64>(level) << 48) | id;
  if (std::sscanf(s.c_str(), "%llu%c", &id, &extra) == 1 && id < (1ULL << 48)) return static_cast<u64>(id);
  return std::nullopt;
}

Result<std::optional<QuotaState>> read_quota(fs::FsInfo& fs) {
  auto root = fs.find_root(QUOTA_TREE_OBJECTID);
  if (!root) return std::optional<QuotaState>{};
  QuotaState q;
  q.simple_quota = (fs.super().incompat_flags.get() & INCOMPAT_SIMPLE_QUOTA) != 0;
  u64 last_leaf = 0;
  std::vector<Key> relations;
  auto st = ctree::for_each_item(fs, *root, {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
    if (leaf.bytenr() != last_leaf) {
      last_leaf = leaf.bytenr();
      q.quota_tree_leaves++;
    }
    Key k = leaf.item_key(slot);
    auto data = leaf.item_data(slot);
    auto where = [&] { return "quota tree leaf " + std::to_string(leaf.bytenr()) + " slot " + std::to_string(slot); };
    switch (k.type) {
      case KeyType::QGROUP_STATUS: {
        FSCTL_TRY_ASSIGN(QgroupStatusRecord s, with_context(decode_qgroup_status(data), where()));
        q.status_present = true;
        q.version = s.version;
        q.generation = s.generation;
        q.flags = s.flags;
        q.rescan = s.rescan;
        q.enable_gen = s.enable_gen;
        break;
      }
      case KeyType::QGROUP_INFO: {
        FSCTL_TRY_ASSIGN(QgroupInfoRecord i, with_context(decode_qgroup_info(data), where()));
        auto& g = q.qgroups[k.offset];
        g.qgroupid = k.offset;
        g.has_info = true;
        g.info_generation = i.generation;
        g.ondisk = {i.rfer, i.rfer_cmpr, i.excl, i.excl_cmpr};
        break;
      }
      case KeyType::QGROUP_LIMIT: {
        FSCTL_TRY_ASSIGN(QgroupLimitRecord l, with_context(decode_qgroup_limit(data), where()));
        auto& g = q.qgroups[k.offset];
        g.qgroupid = k.offset;
        g.limit = QgroupLimit{l.flags, l.max_rfer, l.max_excl, l.rsv_rfer, l.rsv_excl};
        break;
      }
      case KeyType::QGROUP_RELATION:
        relations.push_back(k);
        break;
      default:
        break;
    }
    return ctree::Visit::next;
  });
  if (!st) return make_error(st.error().context("reading quota tree"));
  // Each relation is stored as (child, parent) and (parent, child); the
  // member is the one with the lower level (kernel add_qgroup_relation_item).
  std::set<std::pair<u64, u64>> seen;
  for (const Key& k : relations) {
    FSCTL_TRY_ASSIGN(QgroupRelation r, with_context(decode_qgroup_relation(k), "quota tree"));
    seen.insert({r.member, r.parent});
  }
  for (auto [child, parent] : seen) {
    auto& c = q.qgroups[child];
    c.qgroupid = child;
    c.parents.insert(parent);
    auto& p = q.qgroups[parent];
    p.qgroupid = parent;
    p.children.insert(child);
  }
  return std::optional<QuotaState>(std::move(q));
}

}  // namespace fsctl::qgroup
