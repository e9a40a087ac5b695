// SPDX-License-Identifier: GPL-2.0-only
// `fsctl qgroup show` (like `btrfs qgroup show -pcre`, offline) and
// `fsctl qgroup verify` (on-disk vs computed numbers, exit 1 on a mismatch).
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "check/qgroup_verify.h"
#include "cmd/commands.h"
#include "cmd/interrupt.h"
#include "lib/format/feature_flags.h"
#include "lib/fs/subvolumes.h"
#include "lib/qgroup/repair.h"

namespace fsctl::cmd {
using json = nlohmann::ordered_json;
using qgroup::qgroupid_to_string;

namespace {

std::string human(u64 v) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double d = static_cast<double>(v);
  int u = 0;
  while (d >= 1024 && u < 6) {
    d /= 1024;
    ++u;
  }
  char b[32];
  if (u == 0)
    std::snprintf(b, sizeof b, "%lluB", static_cast<unsigned long long>(v));
  else
    std::snprintf(b, sizeof b, "%.2f%s", d, units[u]);
  return b;
}

std::string join_ids(const std::set<u64>& ids) {
  if (ids.empty()) return "-";
  std::string s;
  for (u64 id : ids) s += (s.empty() ? "" : ",") + qgroupid_to_string(id);
  return s;
}

void print_quota_status(const qgroup::QuotaState& q) {
  std::cout << "quota status: flags " << format::hex(q.flags) << " ("
            << (q.on() ? "on" : "off") << (q.rescan_running() ? ", rescan in progress" : "")
            << (q.inconsistent() ? ", inconsistent" : "") << "), generation " << q.generation << '\n';
}

// ------------------------------------------------------------------ show

int run_show(const GlobalOptions& g, const std::vector<std::string>& devs, bool raw, const std::string& sort) {
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, false);
  if (!fs) return report_error(fs.error());
  auto q = qgroup::read_quota(**fs);
  if (!q) return report_error(q.error());
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
  if (!paths) return report_error(paths.error());
  std::vector<const qgroup::QgroupItem*> rows;
  for (auto& [id, item] : (*q)->qgroups) rows.push_back(&item);
  std::string field = sort;
  bool desc = false;
  if (!field.empty() && (field[0] == '-' || field[0] == '+')) {
    desc = field[0] == '-';
    field = field.substr(1);
  }
  auto maxr = [](const qgroup::QgroupItem* i) { return i->limit && (i->limit->flags & qgroup::QGROUP_LIMIT_MAX_RFER) ? i->limit->max_rfer : ~0ULL; };
  auto maxe = [](const qgroup::QgroupItem* i) { return i->limit && (i->limit->flags & qgroup::QGROUP_LIMIT_MAX_EXCL) ? i->limit->max_excl : ~0ULL; };
  auto keyf = [&](const qgroup::QgroupItem* i) -> u64 {
    if (field == "rfer") return i->ondisk.rfer;
    if (field == "excl") return i->ondisk.excl;
    if (field == "max_rfer") return maxr(i);
    if (field == "max_excl") return maxe(i);
    return i->qgroupid;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](auto a, auto b) { return desc ? keyf(a) > keyf(b) : keyf(a) < keyf(b); });
  auto path_of = [&](const qgroup::QgroupItem* i) -> std::string {
    if (qgroup::qgroup_level(i->qgroupid) > 0) return "<" + std::to_string(i->children.size()) + " member qgroups>";
    if (i->qgroupid == 5) return "<toplevel>";
    auto it = paths->find(i->qgroupid);
    return it == paths->end() ? "<stale>" : it->second;
  };
  if (g.format == Format::json) {
    json out = json_header("qgroup show");
    out["quota_enabled"] = true;
    out["status"] = {{"flags", (*q)->flags}, {"generation", (*q)->generation}, {"rescan", (*q)->rescan},
                     {"inconsistent", (*q)->inconsistent()}, {"rescan_running", (*q)->rescan_running()}};
    json arr = json::array();
    for (auto* i : rows) {
      json parents = json::array(), children = json::array();
      for (u64 p : i->parents) parents.push_back(qgroupid_to_string(p));
      for (u64 c : i->children) children.push_back(qgroupid_to_string(c));
      arr.push_back({{"qgroupid", qgroupid_to_string(i->qgroupid)}, {"referenced", i->ondisk.rfer},
                     {"referenced_compressed", i->ondisk.rfer_cmpr}, {"exclusive", i->ondisk.excl},
                     {"exclusive_compressed", i->ondisk.excl_cmpr},
                     {"max_referenced", maxr(i) == ~0ULL ? json(nullptr) : json(maxr(i))},
                     {"max_exclusive", maxe(i) == ~0ULL ? json(nullptr) : json(maxe(i))},
                     {"parents", parents}, {"children", children}, {"path", path_of(i)}});
    }
    out["qgroups"] = arr;
    std::cout << out.dump(2) << '\n';
    return EXIT_OK;
  }
  auto num = [&](u64 v) { return raw ? std::to_string(v) : human(v); };
  auto lim = [&](u64 v) { return v == ~0ULL ? std::string("none") : num(v); };
  std::printf("%-10s %14s %14s %15s %14s %-12s %-14s %s\n", "Qgroupid", "Referenced", "Exclusive", "Max referenced",
              "Max exclusive", "Parent", "Child", "Path");
  std::printf("%-10s %14s %14s %15s %14s %-12s %-14s %s\n", "--------", "----------", "---------", "--------------",
              "-------------", "------", "-----", "----");
  for (auto* i : rows)
    std::printf("%-10s %14s %14s %15s %14s %-12s %-14s %s\n", qgroupid_to_string(i->qgroupid).c_str(), num(i->ondisk.rfer).c_str(),
                num(i->ondisk.excl).c_str(), lim(maxr(i)).c_str(), lim(maxe(i)).c_str(), join_ids(i->parents).c_str(),
                join_ids(i->children).c_str(), path_of(i).c_str());
  if ((*q)->inconsistent() || (*q)->rescan_running())
    rep.warning(std::string("qgroup data ") + ((*q)->rescan_running() ? "is being rescanned" : "is inconsistent") +
                "; numbers may be wrong (fsctl qgroup verify computes the right ones)");
  return EXIT_OK;
}

// ------------------------------------------------------------------ verify

int run_verify(const GlobalOptions& g, const std::vector<std::string>& devs, bool repair) {
  StderrReporter rep(g);
  auto fs = repair ? open_read_write(devs, g, rep) : open_read_only(devs, g, rep, false);
  if (!fs) return report_error(fs.error());
  auto r = check::verify_qgroups(**fs);
  if (!r) return report_error(r.error());
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
    auto rr = qgroup::repair_qgroups(**fs, rep_.quota, rep_.computed, signals.stop());
    if (!rr) return report_error(rr.error(), devs[0]);
    repaired = *rr;
    rc = repaired->interrupted ? EXIT_INTERRUPTED : EXIT_OK;
    if (!repaired->wrote && !repaired->interrupted) refresh_lagging_supers(**fs, rep);
  }
  if (g.format == Format::json) {
    json out = json_header("qgroup verify");
    out["quota_enabled"] = true;
    out["status"] = {{"flags", rep_.quota.flags}, {"generation", rep_.quota.generation}, {"rescan", rep_.quota.rescan},
                     {"inconsistent", rep_.quota.inconsistent()}, {"rescan_running", rep_.quota.rescan_running()}};
    json rows = json::array();
    for (auto& row : rep_.rows) {
      json j = {{"qgroupid", qgroupid_to_string(row.qgroupid)}, {"status", row.status},
                {"subvol_exists", row.subvol_exists}, {"subvol_dropping", row.subvol_dropping},
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
    out["ok"] = rep_.ok();
    if (repaired)
      out["repair"] = {{"wrote", repaired->wrote}, {"transid", repaired->transid},
                       {"qgroups_updated", repaired->qgroups_updated}, {"qgroups_added", repaired->qgroups_added},
                       {"status_fixed", repaired->status_fixed}, {"reserved_bytes", repaired->reserved_bytes},
                       {"used_bytes", repaired->used_bytes}, {"tree_blocks_written", repaired->blocks_written},
                       {"interrupted", repaired->interrupted}};
    out["interrupted"] = repaired && repaired->interrupted;
    if (repaired && repaired->interrupted) out["state_note"] = "nothing was written";
    out["stats"] = {{"subvolumes", rep_.computed.subvols.size()}, {"tree_blocks", rep_.computed.tree_blocks},
                    {"data_extents", rep_.computed.data_extents}, {"root_sets", rep_.computed.rootsets},
                    {"quota_tree_leaves", rep_.quota.quota_tree_leaves}, {"seconds", rep_.computed.seconds}};
    std::cout << out.dump(2) << '\n';
    return rc;
  }
  print_quota_status(rep_.quota);
  std::printf("%-10s %-8s %15s %15s %12s %15s %15s %12s\n", "qgroupid", "status", "rfer on-disk", "rfer computed",
              "diff", "excl on-disk", "excl computed", "diff");
  for (auto& row : rep_.rows) {
    if (row.status == "ok" && !g.verbose) continue;
    auto od = [&](u64 v) { return row.ondisk ? std::to_string(v) : std::string("-"); };
    std::printf("%-10s %-8s %15s %15llu %12lld %15s %15llu %12lld\n", qgroupid_to_string(row.qgroupid).c_str(),
                row.status.c_str(), od(row.ondisk ? row.ondisk->rfer : 0).c_str(),
                static_cast<unsigned long long>(row.computed.rfer), static_cast<long long>(row.diff_rfer()),
                od(row.ondisk ? row.ondisk->excl : 0).c_str(), static_cast<unsigned long long>(row.computed.excl),
                static_cast<long long>(row.diff_excl()));
  }
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
                  InterruptScope::signal_name() ? InterruptScope::signal_name() : "stop");
    else if (!repaired->wrote)
      std::printf("repair: nothing to write, qgroups are right\n");
    else
      std::printf("repair: transaction %llu rewrote %llu qgroups, added %llu%s (%llu tree blocks written, %llu bytes used of %llu reserved)\n",
                  static_cast<unsigned long long>(repaired->transid), static_cast<unsigned long long>(repaired->qgroups_updated),
                  static_cast<unsigned long long>(repaired->qgroups_added), repaired->status_fixed ? ", cleared the status flags" : "",
                  static_cast<unsigned long long>(repaired->blocks_written), static_cast<unsigned long long>(repaired->used_bytes),
                  static_cast<unsigned long long>(repaired->reserved_bytes));
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
  show->add_flag("--raw", *s_raw, "Sizes in bytes (default: human readable)");
  show->add_option("--sort", *s_sort, "Sort by qgroupid, rfer, excl, max_rfer or max_excl; prefix - for descending")
      ->check(CLI::IsMember({"qgroupid", "rfer", "excl", "max_rfer", "max_excl", "+qgroupid", "+rfer", "+excl",
                             "+max_rfer", "+max_excl", "-qgroupid", "-rfer", "-excl", "-max_rfer", "-max_excl"}));
  show->add_option("devices", *s_devs, "All devices of the filesystem")->required();
  show->callback([&g, &action, s_devs, s_raw, s_sort] {
    action = [&g, s_devs, s_raw, s_sort] { return run_show(g, *s_devs, *s_raw, *s_sort); };
  });

  auto* verify = qg->add_subcommand("verify", "Recompute every qgroup from the trees and compare with the quota tree");
  auto v_devs = std::make_shared<std::vector<std::string>>();
  auto v_repair = std::make_shared<bool>(false);
  verify->add_flag("--repair", *v_repair, "Write the computed numbers into the quota tree (an offline rescan)");
  verify->add_option("devices", *v_devs, "All devices of the filesystem")->required();
  verify->callback([&g, &action, v_devs, v_repair] { action = [&g, v_devs, v_repair] { return run_verify(g, *v_devs, *v_repair); }; });
}

}  // namespace fsctl::cmd
