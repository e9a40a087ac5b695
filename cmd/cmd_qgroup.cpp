// SPDX-License-Identifier: GPL-2.0-only
// `fsctl qgroup show` (like `btrfs qgroup show -pcre`, offline) and
// `fsctl qgroup verify` (on-disk vs computed numbers, exit 1 on a mismatch).
#include <algorithm>
#include <functional>
#include <optional>
#include <variant>
#include <cstdio>
#include <iostream>

#include "check/qgroup_verify.h"
#include "cmd/commands.h"
#include "cmd/interrupt.h"
#include "cmd/json_members.h"
#include "cmd/leftover_report.h"
#include "cmd/keep_until_exit.h"
#include "lib/format/feature_flags.h"
#include "lib/fs/subvolumes.h"
#include "lib/qgroup/repair.h"

namespace fsctl::cmd {
using json = nlohmann::ordered_json;
using qgroup::qgroupid_to_string;

namespace {

std::string join_ids(const std::set<u64>& ids) {
  if (ids.empty()) return "-";
  std::string s;
  for (u64 id : ids) s += (s.empty() ? "" : ",") + qgroupid_to_string(id);
  return s;
}

void print_quota_status(const qgroup::QuotaState& q) {
  std::cout << "quota status: flags " << format::hex(q.flags) << " ("
            << (q.on() ? "on" : "off") << (q.rescan_running() ? ", rescan in progress" : "")
            << (q.inconsistent() ? ", inconsistent" : "") << "), generation " << q.generation;
  if (q.simple_quota) std::cout << ", simple quotas from generation " << q.squota_enable_gen();
  std::cout << '\n';
}

// ------------------------------------------------------------------ show

/// What `qgroup show` prints besides qgroupid, referenced, exclusive and
/// path (progs' -p -c -r -e); none given: all of them, like -pcre.
struct ShowColumns {
  bool parent = false, child = false, max_rfer = false, max_excl = false;
  [[nodiscard]] bool none() const { return !parent && !child && !max_rfer && !max_excl; }
};

/// One key of --sort: field and direction.
struct SortKey {
  std::string field;
  bool descending = false;
};

const std::vector<std::string>& sort_fields() {
  static const std::vector<std::string> f = {"qgroupid", "rfer", "excl", "max_rfer", "max_excl", "path"};
  return f;
}

// "--sort=-excl,qgroupid" -> keys; an error message for a bad list.
std::variant<std::vector<SortKey>, std::string> parse_sort(const std::string& list) {
  std::vector<SortKey> keys;
  if (list.empty()) return keys;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t comma = list.find(',', pos);
    std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    SortKey k;
    if (!item.empty() && (item[0] == '+' || item[0] == '-')) {
      k.descending = item[0] == '-';
      item = item.substr(1);
    }
    if (std::find(sort_fields().begin(), sort_fields().end(), item) == sort_fields().end())
      return "unknown sort field '" + item + "' (qgroupid, rfer, excl, max_rfer, max_excl, path; prefix + or -)";
    k.field = item;
    keys.push_back(k);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return keys;
}

int run_show(const GlobalOptions& g, const std::vector<std::string>& devs, ShowColumns cols, const std::string& sort) {
  auto parsed = parse_sort(sort);
  if (auto* err = std::get_if<std::string>(&parsed)) return usage_error(g, "--sort: " + *err);
  const auto& keys = std::get<std::vector<SortKey>>(parsed);
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, false);
  if (!fs) return report_error(g, fs.error());
  auto q = qgroup::read_quota(**fs);
  if (!q) return report_error(g, q.error());
  if (!*q) {
    if (g.format == Format::json) {
      json out = json_header("qgroup show");
      out["quota_enabled"] = false;
      out["qgroups"] = json::array();
      std::cout << out.dump(2) << '\n';
    } else {
      std::cout << "quota is not enabled on this filesystem\n";
    }
    return EXIT_OK;
  }
  auto paths = fs::subvolume_paths(**fs);
  if (!paths) return report_error(g, paths.error());
  std::vector<const qgroup::QgroupItem*> rows;
  for (auto& [id, item] : (*q)->qgroups) rows.push_back(&item);
  auto maxr = [](const qgroup::QgroupItem* i) { return i->limit && (i->limit->flags & qgroup::QGROUP_LIMIT_MAX_RFER) ? i->limit->max_rfer : ~0ULL; };
  auto maxe = [](const qgroup::QgroupItem* i) { return i->limit && (i->limit->flags & qgroup::QGROUP_LIMIT_MAX_EXCL) ? i->limit->max_excl : ~0ULL; };
  // Simple quotas keep the qgroup of a deleted subvolume while extents it
  // owns are in use: not stale (verify's status "space_holder").
  auto space_holder = [&](const qgroup::QgroupItem* i) {
    return (*q)->simple_quota && (i->ondisk.rfer || i->ondisk.excl) && !(**fs).find_root(i->qgroupid);
  };
  auto path_of = [&](const qgroup::QgroupItem* i) -> std::string {
    if (qgroup::qgroup_level(i->qgroupid) > 0) return "<" + std::to_string(i->children.size()) + " member qgroups>";
    if (i->qgroupid == 5) return "<toplevel>";
    auto it = paths->find(i->qgroupid);
    if (it != paths->end()) return it->second;
    // No path but a ROOT_ITEM: deleted, its tree not yet dropped (the label
    // of btrfs-progs 6.x qgroup show; "<stale>": no subvolume at all).
    if ((**fs).find_root(i->qgroupid)) return "<under deletion>";
    return space_holder(i) ? "<squota space holder>" : "<stale>";
  };
  // Keys in the order given, then qgroupid ascending; "no limit" sorts as the largest.
  auto cmp_field = [&](const std::string& f, const qgroup::QgroupItem* a, const qgroup::QgroupItem* b) -> int {
    auto three = [](auto x, auto y) { return x < y ? -1 : x > y ? 1 : 0; };
    if (f == "rfer") return three(a->ondisk.rfer, b->ondisk.rfer);
    if (f == "excl") return three(a->ondisk.excl, b->ondisk.excl);
    if (f == "max_rfer") return three(maxr(a), maxr(b));
    if (f == "max_excl") return three(maxe(a), maxe(b));
    if (f == "path") {
      // As btrfs: levels apart by qgroupid; then by the subvolume's path
      // ("" for 0/5), '/' before any other character, no path last.
      if (qgroup::qgroup_level(a->qgroupid) != qgroup::qgroup_level(b->qgroupid)) return three(a->qgroupid, b->qgroupid);
      auto raw_path = [&](const qgroup::QgroupItem* i) -> std::optional<std::string> {
        if (qgroup::qgroup_level(i->qgroupid) > 0) return std::nullopt;
        if (i->qgroupid == 5) return std::string();
        auto it = paths->find(i->qgroupid);
        return it == paths->end() ? std::nullopt : std::optional<std::string>(it->second);
      };
      auto pa = raw_path(a), pb = raw_path(b);
      if (!pa || !pb) return pa ? -1 : pb ? 1 : 0;
      auto key = [](const std::string& p) {
        std::string k = p;
        for (auto& ch : k) ch = ch == '/' ? '\0' : ch;  // '/' sorts first
        return k;
      };
      return three(key(*pa), key(*pb));
    }
    return three(a->qgroupid, b->qgroupid);
  };
  std::stable_sort(rows.begin(), rows.end(), [&](auto a, auto b) {
    for (const auto& k : keys) {
      int c = cmp_field(k.field, a, b);
      if (c) return k.descending ? c > 0 : c < 0;
    }
    return a->qgroupid < b->qgroupid;
  });
  if (g.format == Format::json) {
    json out = json_header("qgroup show");
    out["quota_enabled"] = true;
    out["status"] = quota_status_json(**q);
    json arr = json::array();
    for (auto* i : rows) {
      // The path as data, not the text's labels: "" for the top level, null
      // without one; a higher level's members listed, not counted.
      const bool level0 = qgroup::qgroup_level(i->qgroupid) == 0;
      auto it = paths->find(i->qgroupid);
      json path = nullptr, exists = nullptr, dropping = nullptr, holder = nullptr;
      if (level0) {
        bool has_root = i->qgroupid == 5 || (**fs).find_root(i->qgroupid).has_value();
        if (i->qgroupid == 5) path = "";
        else if (it != paths->end()) path = it->second;
        exists = has_root;
        dropping = has_root && i->qgroupid != 5 && it == paths->end();
        holder = space_holder(i);
      }
      arr.push_back({{"qgroupid", qgroupid_to_string(i->qgroupid)}, {"referenced", i->ondisk.rfer},
                     {"referenced_compressed", i->ondisk.rfer_cmpr}, {"exclusive", i->ondisk.excl},
                     {"exclusive_compressed", i->ondisk.excl_cmpr},
                     {"max_referenced", maxr(i) == ~0ULL ? json(nullptr) : json(maxr(i))},
                     {"max_exclusive", maxe(i) == ~0ULL ? json(nullptr) : json(maxe(i))},
                     {"parents", qgroupids_json(i->parents)}, {"children", qgroupids_json(i->children)},
                     {"path", path}, {"members", level0 ? json::array() : qgroupids_json(i->children)},
                     {"subvol_exists", exists}, {"subvol_dropping", dropping},
                     {"squota_space_holder", holder}});
    }
    out["qgroups"] = arr;
    std::cout << out.dump(2) << '\n';
    return EXIT_OK;
  }
  // The table as btrfs qgroup show lays it out: each column as wide as its
  // longest cell (at least progs' minimum), a space after each; ids and
  // relations left-aligned, sizes right-aligned; the path last.
  const UnitMode units = g.units_or(UNITS_HUMAN);
  if (cols.none()) cols = {true, true, true, true};
  struct Column {
    std::string title;
    std::size_t width;
    bool left;
    std::function<std::string(const qgroup::QgroupItem*)> cell;
  };
  auto lim = [&](u64 v) { return v == ~0ULL ? std::string("none") : format_bytes(v, units); };
  std::vector<Column> table;
  table.push_back({"Qgroupid", 9, true, [](auto i) { return qgroupid_to_string(i->qgroupid); }});
  table.push_back({"Referenced", 12, false, [&](auto i) { return format_bytes(i->ondisk.rfer, units); }});
  table.push_back({"Exclusive", 12, false, [&](auto i) { return format_bytes(i->ondisk.excl, units); }});
  if (cols.max_rfer) table.push_back({"Max referenced", 15, false, [&](auto i) { return lim(maxr(i)); }});
  if (cols.max_excl) table.push_back({"Max exclusive", 14, false, [&](auto i) { return lim(maxe(i)); }});
  if (cols.parent) table.push_back({"Parent", 8, true, [](auto i) { return join_ids(i->parents); }});
  if (cols.child) table.push_back({"Child", 5, true, [](auto i) { return join_ids(i->children); }});
  std::vector<std::vector<std::string>> cells;
  for (auto* i : rows) {
    std::vector<std::string> r;
    for (auto& c : table) {
      r.push_back(c.cell(i));
      c.width = std::max(c.width, r.back().size());
    }
    cells.push_back(std::move(r));
  }
  auto pad = [](const std::string& text, std::size_t w, bool left) {
    std::string fill(w > text.size() ? w - text.size() : 0, ' ');
    return left ? text + fill : fill + text;
  };
  std::string head, rule;
  for (auto& c : table) {
    head += pad(c.title, c.width, c.left) + ' ';
    rule += pad(std::string(c.title.size(), '-'), c.width, c.left) + ' ';
  }
  std::cout << head << "  Path \n" << rule << "  ---- \n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string line;
    for (std::size_t c = 0; c < table.size(); ++c) line += pad(cells[r][c], table[c].width, table[c].left) + ' ';
    std::cout << line << "  " << path_of(rows[r]) << '\n';
  }
  if ((*q)->inconsistent() || (*q)->rescan_running())
    rep.warning(std::string("qgroup data ") + ((*q)->rescan_running() ? "is being rescanned" : "is inconsistent") +
                "; numbers may be wrong (fsctl qgroup verify computes the right ones)");
  return EXIT_OK;
}

// ------------------------------------------------------------------ verify

int run_verify(const GlobalOptions& g, const std::vector<std::string>& devs, bool repair, bool progress) {
  StderrReporter rep(g);
  auto fs = repair ? open_read_write(devs, g, rep) : open_read_only(devs, g, rep, false);
  if (!fs) return report_error(g, fs.error());
  const KeepUntilExit keep(*fs);  // no teardown of the cache at exit (keep_until_exit.h)
  const auto leftover = report_leftover_work(**fs, rep, false);
  auto shown = stderr_progress(g, "qgroup verify", progress);
  auto r = check::verify_qgroups(**fs, shown.get());
  if (shown) shown->finish();
  if (!r) return report_error(g, r.error());
  if (!*r) {
    if (g.format == Format::json) {
      json out = json_header("qgroup verify");
      out["quota_enabled"] = false;
      std::cout << out.dump(2) << '\n';
    } else {
      std::cout << "quota is not enabled on this filesystem: nothing to verify\n";
    }
    return EXIT_NO_QUOTA;
  }
  const auto& rep_ = **r;
  int rc = rep_.ok() ? EXIT_OK : EXIT_PROBLEMS;
  std::optional<qgroup::RepairResult> repaired;
  if (repair) {
    InterruptScope signals;
    qgroup::RepairOptions ro;
    ro.stop = signals.stop();
    auto rr = qgroup::repair_qgroups(**fs, rep_.quota, rep_.computed, ro);
    if (!rr) return report_error(g, rr.error(), devs[0]);
    repaired = *rr;
    rc = repaired->interrupted ? EXIT_INTERRUPTED : EXIT_OK;
    if (!repaired->wrote && !repaired->interrupted) refresh_lagging_supers(**fs, rep);
  }
  if (g.format == Format::json) {
    json out = json_header("qgroup verify");
    out["quota_enabled"] = true;
    out["status"] = quota_status_json(rep_.quota);
    json rows = json::array();
    for (auto& row : rep_.rows) {
      // Relations from the quota tree; subvolume facts only for level 0.
      const bool level0 = qgroup::qgroup_level(row.qgroupid) == 0;
      auto item = rep_.quota.qgroups.find(row.qgroupid);
      const bool known = item != rep_.quota.qgroups.end();
      json j = {{"qgroupid", qgroupid_to_string(row.qgroupid)}, {"status", row.status},
                {"subvol_exists", level0 ? json(row.subvol_exists) : json(nullptr)},
                {"subvol_dropping", level0 ? json(row.subvol_dropping) : json(nullptr)},
                {"parents", known ? qgroupids_json(item->second.parents) : json::array()},
                {"children", known ? qgroupids_json(item->second.children) : json::array()},
                {"computed", {{"referenced", row.computed.rfer}, {"referenced_compressed", row.computed.rfer_cmpr},
                              {"exclusive", row.computed.excl}, {"exclusive_compressed", row.computed.excl_cmpr}}}};
      if (row.ondisk)
        j["ondisk"] = {{"referenced", row.ondisk->rfer}, {"referenced_compressed", row.ondisk->rfer_cmpr},
                       {"exclusive", row.ondisk->excl}, {"exclusive_compressed", row.ondisk->excl_cmpr}};
      else
        j["ondisk"] = nullptr;
      j["diff"] = {{"referenced", row.diff_rfer()}, {"exclusive", row.diff_excl()}};
      rows.push_back(j);
    }
    out["qgroups"] = rows;
    out["verified"] = rep_.rows.size();
    out["mismatches"] = rep_.mismatches;
    out["differences_expected"] = rep_.differences_expected;
    if (rep_.differences_expected) out["expected_reason"] = rep_.expected_reason;
    // The verdict: with --repair, whether the numbers on disk are right
    // after it (they are, unless it was interrupted before its commit).
    const bool right_after = repaired && !repaired->interrupted;
    out["ok"] = right_after || rep_.ok();
    if (repaired)
      out["repair"] = {{"wrote", repaired->wrote}, {"transid", repaired->transid},
                       {"mismatches_left", right_after ? 0 : rep_.mismatches},
                       {"qgroups_updated", repaired->qgroups_updated}, {"qgroups_added", repaired->qgroups_added},
                       {"status_fixed", repaired->status_fixed}, {"reserved_bytes", repaired->reserved_bytes},
                       {"used_bytes", repaired->used_bytes}, {"tree_blocks_written", repaired->blocks_written},
                       {"interrupted", repaired->interrupted}};
    out["interrupted"] = repaired && repaired->interrupted;
    if (repaired && repaired->interrupted) out["state_note"] = "nothing was written";
    out["leftover_work"] = leftover_work_json(leftover);
    const auto& cs = rep_.computed;
    auto simple_only = [&](u64 v) { return cs.simple ? json(v) : json(nullptr); };
    out["stats"] = {{"subvolumes", cs.subvols.size()}, {"tree_blocks", cs.tree_blocks},
                    {"data_extents", cs.data_extents}, {"root_sets", cs.rootsets},
                    {"quota_tree_leaves", rep_.quota.quota_tree_leaves},
                    {"extents_before_enable_gen", simple_only(cs.extents_before_enable)},
                    {"data_extents_without_owner", simple_only(cs.data_extents_unowned)}, {"seconds", cs.seconds}};
    std::cout << out.dump(2) << '\n';
    return rc;
  }
  print_quota_status(rep_.quota);
  std::printf("%-10s %-8s %15s %15s %12s %15s %15s %12s\n", "qgroupid", "status", "rfer on-disk", "rfer computed",
              "diff", "excl on-disk", "excl computed", "diff");
  const UnitMode units = g.units_or(UNITS_RAW);  // bytes unless a unit option is given
  for (auto& row : rep_.rows) {
    if (row.status == "ok" && !g.verbose) continue;
    auto od = [&](u64 v) { return row.ondisk ? format_bytes(v, units) : std::string("-"); };
    std::printf("%-10s %-8s %15s %15s %12s %15s %15s %12s\n", qgroupid_to_string(row.qgroupid).c_str(),
                row.status.c_str(), od(row.ondisk ? row.ondisk->rfer : 0).c_str(), format_bytes(row.computed.rfer, units).c_str(),
                format_bytes_signed(row.diff_rfer(), units).c_str(), od(row.ondisk ? row.ondisk->excl : 0).c_str(),
                format_bytes(row.computed.excl, units).c_str(), format_bytes_signed(row.diff_excl(), units).c_str());
  }
  if (rep_.computed.simple)
    std::printf("verified %zu qgroups with simple-quota rules (%llu tree blocks and %llu data extents charged to "
                "their owners; %llu extents older than generation %llu not counted) in %.3f s: %llu mismatched\n",
                rep_.rows.size(), static_cast<unsigned long long>(rep_.computed.tree_blocks),
                static_cast<unsigned long long>(rep_.computed.data_extents),
                static_cast<unsigned long long>(rep_.computed.extents_before_enable),
                static_cast<unsigned long long>(rep_.computed.enable_gen), rep_.computed.seconds,
                static_cast<unsigned long long>(rep_.mismatches));
  else
    std::printf("verified %zu qgroups (%llu subvolume trees, %llu tree blocks, %llu data extents) in %.3f s: %llu mismatched\n",
                rep_.rows.size(), static_cast<unsigned long long>(rep_.computed.subvols.size()),
                static_cast<unsigned long long>(rep_.computed.tree_blocks),
                static_cast<unsigned long long>(rep_.computed.data_extents), rep_.computed.seconds,
                static_cast<unsigned long long>(rep_.mismatches));
  for (auto& row : rep_.rows)
    if (row.subvol_dropping)
      std::printf("note: subvolume %llu is being deleted (drop in progress): qgroup %s is right now and changes when the drop finishes\n",
                  static_cast<unsigned long long>(row.qgroupid), qgroupid_to_string(row.qgroupid).c_str());
  if (rep_.mismatches && rep_.differences_expected)
    std::printf("differences are expected: %s\n", rep_.expected_reason.c_str());
  else if (rep_.mismatches && !repaired)
    std::printf("qgroup numbers on disk are wrong; fsctl qgroup verify --repair writes the computed ones\n");
  if (repaired) {
    if (repaired->interrupted)
      std::printf("interrupted (%s) before the repair's commit: nothing was written\n",
                  InterruptScope::signal_name());
    else if (!repaired->wrote)
      std::printf("repair: nothing to write, qgroups are right\n");
    else
      std::printf("repair: transaction %llu rewrote %llu qgroups, added %llu%s (%llu tree blocks written, %s used of %s reserved)\n",
                  static_cast<unsigned long long>(repaired->transid), static_cast<unsigned long long>(repaired->qgroups_updated),
                  static_cast<unsigned long long>(repaired->qgroups_added), repaired->status_fixed ? ", cleared the status flags" : "",
                  static_cast<unsigned long long>(repaired->blocks_written), bytes_phrase(repaired->used_bytes, units).c_str(),
                  format_bytes(repaired->reserved_bytes, units).c_str());
  }
  return rc;
}

}  // namespace

void register_qgroup(CLI::App& app, const GlobalOptions& g, Action& action) {
  auto* qg = app.add_subcommand("qgroup", "Quota groups of an unmounted filesystem");
  qg->require_subcommand(1);

  auto* show = qg->add_subcommand("show", "List qgroups with their on-disk numbers, limits and relations");
  auto s_devs = std::make_shared<std::vector<std::string>>();
  auto s_raw = std::make_shared<bool>(false);
  auto s_sort = std::make_shared<std::string>();
  auto s_cols = std::make_shared<ShowColumns>();
  // --raw is also a global unit option (main reads every unit option in
  // order); kept here so that `qgroup show --help` lists it.
  show->add_flag("--raw", *s_raw, "Sizes in bytes (default: human readable; see also the global unit options)");
  show->add_flag("-p", s_cols->parent, "Print the parent qgroup ids (btrfs qgroup show -p)");
  show->add_flag("-c", s_cols->child, "Print the child qgroup ids");
  show->add_flag("-r", s_cols->max_rfer, "Print the referenced limit (max referenced)");
  show->add_flag("-e", s_cols->max_excl, "Print the exclusive limit (max exclusive); none of -p -c -r -e: all, like -pcre");
  show->add_option("--sort", *s_sort,
                   "Sort by a comma-separated list of qgroupid, rfer, excl, max_rfer, max_excl, path; prefix - for descending, + ascending")
      ->check(CLI::Validator(
          [](std::string& v) {
            auto r = parse_sort(v);
            auto* e = std::get_if<std::string>(&r);
            return e ? *e : std::string();
          },
          "LIST"));
  show->add_option("devices", *s_devs, "All devices of the filesystem")->required();
  show->callback([&g, &action, s_devs, s_raw, s_sort, s_cols] {
    action = [&g, s_devs, s_sort, s_cols] { return run_show(g, *s_devs, *s_cols, *s_sort); };
  });

  auto* verify = qg->add_subcommand("verify", "Recompute every qgroup from the trees and compare with the quota tree");
  auto v_devs = std::make_shared<std::vector<std::string>>();
  auto v_repair = std::make_shared<bool>(false);
  auto v_progress = std::make_shared<bool>(false);
  verify->add_flag("--repair", *v_repair, "Write the computed numbers into the quota tree (an offline rescan)");
  verify->add_flag("-p", *v_progress, "Progress lines on stderr also when it is not a terminal (the global --progress)");
  verify->add_option("devices", *v_devs, "All devices of the filesystem")->required();
  verify->callback([&g, &action, v_devs, v_repair, v_progress] {
    action = [&g, v_devs, v_repair, v_progress] { return run_verify(g, *v_devs, *v_repair, *v_progress); };
  });
}

}  // namespace fsctl::cmd
