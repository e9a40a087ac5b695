// SPDX-License-Identifier: GPL-2.0-only
// Reading the quota tree. Scans from the first key (0,0,0) over every leaf:
// the btrfs-progs checker starts a pass at a later key and misses leaves when
// the quota tree has more than one (FORMAT.md section 2).
#include <cstdio>
#include <cstring>

#include "lib/ctree/search.h"
#include "lib/format/items.h"
#include "lib/qgroup/qgroup.h"

namespace fsctl::qgroup {
using namespace fsctl::format;

std::string qgroupid_to_string(u64 id) { return std::to_string(qgroup_level(id)) + "/" + std::to_string(qgroup_subvolid(id)); }

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
  u64 last_leaf = 0;
  std::vector<std::pair<u64, u64>> relations;
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
        if (data.size() < 32) return make_error(Errc::corrupt, where() + ": qgroup status item of " + std::to_string(data.size()) + " bytes");
        QgroupStatusItem s{};
        std::memcpy(&s, data.data(), std::min(data.size(), sizeof s));
        q.status_present = true;
        q.version = s.version.get();
        q.generation = s.generation.get();
        q.flags = s.flags.get();
        q.rescan = s.rescan.get();
        q.enable_gen = data.size() >= sizeof s ? s.enable_gen.get() : 0;
        break;
      }
      case KeyType::QGROUP_INFO: {
        if (data.size() < sizeof(QgroupInfoItem)) return make_error(Errc::corrupt, where() + ": qgroup info item of " + std::to_string(data.size()) + " bytes");
        QgroupInfoItem i{};
        std::memcpy(&i, data.data(), sizeof i);
        auto& g = q.qgroups[k.offset];
        g.qgroupid = k.offset;
        g.has_info = true;
        g.info_generation = i.generation.get();
        g.ondisk = {i.rfer.get(), i.rfer_cmpr.get(), i.excl.get(), i.excl_cmpr.get()};
        break;
      }
      case KeyType::QGROUP_LIMIT: {
        if (data.size() < sizeof(QgroupLimitItem)) return make_error(Errc::corrupt, where() + ": qgroup limit item of " + std::to_string(data.size()) + " bytes");
        QgroupLimitItem l{};
        std::memcpy(&l, data.data(), sizeof l);
        auto& g = q.qgroups[k.offset];
        g.qgroupid = k.offset;
        g.limit = QgroupLimit{l.flags.get(), l.max_rfer.get(), l.max_excl.get(), l.rsv_rfer.get(), l.rsv_excl.get()};
        break;
      }
      case KeyType::QGROUP_RELATION:
        relations.emplace_back(k.objectid, k.offset);
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
  for (auto [a, b] : relations) {
    if (qgroup_level(a) == qgroup_level(b))
      return make_error(Errc::corrupt, "quota tree: relation between " + qgroupid_to_string(a) + " and " +
                                           qgroupid_to_string(b) + " of the same level");
    u64 child = qgroup_level(a) < qgroup_level(b) ? a : b;
    u64 parent = child == a ? b : a;
    seen.insert({child, parent});
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
