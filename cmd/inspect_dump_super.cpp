// SPDX-License-Identifier: GPL-2.0-only
// `fsctl inspect dump-super`: the superblock of each device (and its mirrors),
// as text or JSON. Parses its options, calls
// the library, renders text (stdout) or JSON (stdout). Registered by
// register_inspect (cmd_inspect.cpp).
#include <cstdio>
#include <iostream>
#include <memory>

#include "check/tree_stats.h"
#include "cmd/commands.h"
#include "cmd/item_json.h"
#include "lib/ctree/search.h"
#include "lib/format/csum.h"
#include "lib/format/root_item.h"
#include "lib/format/super.h"
#include "lib/format/feature_flags.h"
#include "lib/format/names.h"
#include "lib/fs/fs_info.h"
#include "lib/io/mount_check.h"
#include "cmd/inspect.h"

namespace fsctl::cmd {
using namespace fsctl::format;
using json = nlohmann::ordered_json;

namespace {

json super_to_json(const SuperBlock& sb) {
  u16 ct = sb.csum_type.get();
  json dev = {{"devid", sb.dev_item.devid.get()},
              {"uuid", uuid_to_string(sb.dev_item.uuid)},
              {"fsid", uuid_to_string(sb.dev_item.fsid)},
              {"type", sb.dev_item.type.get()},
              {"total_bytes", sb.dev_item.total_bytes.get()},
              {"bytes_used", sb.dev_item.bytes_used.get()},
              {"io_align", sb.dev_item.io_align.get()},
              {"io_width", sb.dev_item.io_width.get()},
              {"sector_size", sb.dev_item.sector_size.get()},
              {"generation", sb.dev_item.generation.get()},
              {"dev_group", sb.dev_item.dev_group.get()},
              {"seek_speed", sb.dev_item.seek_speed},
              {"bandwidth", sb.dev_item.bandwidth}};
  json backups = json::array();
  for (auto& b : sb.super_roots)
    backups.push_back({{"tree_root", b.tree_root.get()}, {"tree_root_gen", b.tree_root_gen.get()},
                       {"chunk_root", b.chunk_root.get()}, {"chunk_root_gen", b.chunk_root_gen.get()},
                       {"extent_root", b.extent_root.get()}, {"extent_root_gen", b.extent_root_gen.get()},
                       {"fs_root", b.fs_root.get()}, {"fs_root_gen", b.fs_root_gen.get()},
                       {"dev_root", b.dev_root.get()}, {"dev_root_gen", b.dev_root_gen.get()},
                       {"csum_root", b.csum_root.get()}, {"csum_root_gen", b.csum_root_gen.get()},
                       {"total_bytes", b.total_bytes.get()}, {"bytes_used", b.bytes_used.get()},
                       {"num_devices", b.num_devices.get()}});
  std::string label = utf8_text(super_label(sb));
  return json{{"csum_type", ct},
              {"csum_type_name", csum_type_name(ct)},
              {"csum_size", csum_type_known(ct) ? csum_size(ct) : 0},
              {"csum", csum_to_hex(ct, sb.csum)},
              {"bytenr", sb.bytenr.get()},
              {"flags", sb.flags.get()},
              {"flags_names", flag_names(sb.flags.get(), super_flag_bits())},
              {"magic", sb.magic.get() == SUPER_MAGIC ? "_BHRfS_M" : hex(sb.magic.get())},
              {"fsid", uuid_to_string(sb.fsid)},
              {"metadata_uuid", uuid_to_string(header_fsid(sb))},
              {"label", label},
              {"generation", sb.generation.get()},
              {"root", sb.root.get()},
              {"sys_array_size", sb.sys_chunk_array_size.get()},
              {"chunk_root_generation", sb.chunk_root_generation.get()},
              {"root_level", sb.root_level},
              {"chunk_root", sb.chunk_root.get()},
              {"chunk_root_level", sb.chunk_root_level},
              {"log_root", sb.log_root.get()},
              {"log_root_transid", sb.unused_log_root_transid.get()},
              {"log_root_level", sb.log_root_level},
              {"total_bytes", sb.total_bytes.get()},
              {"bytes_used", sb.bytes_used.get()},
              {"sectorsize", sb.sectorsize.get()},
              {"nodesize", sb.nodesize.get()},
              {"leafsize", sb.unused_leafsize.get()},
              {"stripesize", sb.stripesize.get()},
              {"root_dir", sb.root_dir_objectid.get()},
              {"num_devices", sb.num_devices.get()},
              {"compat_flags", sb.compat_flags.get()},
              {"compat_ro_flags", sb.compat_ro_flags.get()},
              {"compat_ro_flags_names", flag_names(sb.compat_ro_flags.get(), compat_ro_bits())},
              {"incompat_flags", sb.incompat_flags.get()},
              {"incompat_flags_names", flag_names(sb.incompat_flags.get(), incompat_bits())},
              {"cache_generation", sb.cache_generation.get()},
              {"uuid_tree_generation", sb.uuid_tree_generation.get()},
              {"dev_item", dev},
              {"backup_roots", backups}};
}

void print_super_text(const json& j, const std::string& device, u64 physical, const std::string& status) {
  std::cout << "superblock: bytenr=" << physical << ", device=" << device << (status.empty() ? "" : ", " + status) << '\n';
  std::cout << "---------------------------------------------------------\n";
  auto line = [](const std::string& k, const std::string& v) {
    std::string pad = k.size() < 8 ? "\t\t\t" : k.size() < 16 ? "\t\t" : "\t";
    std::cout << k << pad << v << '\n';
  };
  auto val = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  for (auto& [k, v] : j.items()) {
    if (k == "dev_item") {
      for (auto& [dk, dv] : v.items()) line("dev_item." + dk, val(dv));
    } else if (k == "backup_roots") {
      int i = 0;
      for (auto& b : v) {
        std::cout << "backup " << i++ << ":";
        for (auto& [bk, bv] : b.items()) std::cout << ' ' << bk << ' ' << val(bv);
        std::cout << '\n';
      }
    } else if (k == "flags" || k == "compat_flags" || k == "compat_ro_flags" || k == "incompat_flags") {
      line(k, hex(v.get<u64>()));
    } else {
      line(k, val(v));
    }
  }
  std::cout << '\n';
}

int run_dump_super(const GlobalOptions& g, const std::vector<std::string>& devs, bool all_mirrors) {
  StderrReporter rep(g);
  json out = json_header("inspect dump-super");
  out["devices"] = json::array();
  int rc = EXIT_OK;
  for (auto& path : devs) {
    // Like every read-only command: a mounted device may change under us.
    if (auto m = io::find_mount(path); m && *m)
      rep.warning(path + ": device is mounted on " + **m + "; what is read may be inconsistent");
    auto dev = io::open_device(path, {}, rep);
    if (!dev) return report_error(dev.error());
    auto d = volumes::read_device_supers(std::move(*dev));
    if (!d) return report_error(d.error());
    json dj = {{"device", path}, {"devid", d->devid}, {"used_copy", d->super_mirror}, {"copies", json::array()}};
    for (auto& c : d->copies) {
      if (!c.fits) continue;
      bool chosen = c.mirror == d->super_mirror;
      if (!chosen && !all_mirrors) {
        if (!c.valid) rep.warning(path + ": superblock copy " + std::to_string(c.mirror) + " at " + std::to_string(c.physical) + " is damaged: " + c.problem);
        continue;
      }
      if (chosen && c.mirror != 0)
        rep.warning(path + ": primary superblock is damaged (" + d->copies[0].problem + "); showing copy " +
                    std::to_string(c.mirror) + " at " + std::to_string(c.physical));
      json cj = {{"mirror", c.mirror}, {"bytenr", c.physical}, {"valid", c.valid}};
      SuperBlock sb{};
      bool have = false;
      if (chosen) {
        sb = d->super;
        have = true;
      } else {
        have = static_cast<bool>(d->dev->read_at(c.physical, super_bytes(sb)));
      }
      if (!c.valid) cj["problem"] = c.problem;
      if (have && sb.magic.get() == SUPER_MAGIC) cj["superblock"] = super_to_json(sb);
      if (g.format == Format::text) {
        if (cj.contains("superblock"))
          print_super_text(cj["superblock"], path, c.physical, c.valid ? "" : "INVALID: " + c.problem);
        else
          std::cout << "superblock: bytenr=" << c.physical << ", device=" << path << ", INVALID: " << c.problem << "\n\n";
      }
      dj["copies"].push_back(cj);
    }
    out["devices"].push_back(dj);
  }
  if (g.format == Format::json) std::cout << out.dump(2) << '\n';
  return rc;
}

}  // namespace

void register_inspect_dump_super(CLI::App* inspect, const GlobalOptions& g, Action& action) {
  auto* ds = inspect->add_subcommand("dump-super", "Print the superblock of each device");
  auto ds_devs = std::make_shared<std::vector<std::string>>();
  auto ds_all = std::make_shared<bool>(false);
  ds->add_flag("-a,--all-mirrors", *ds_all, "Print every superblock copy that fits the device");
  ds->add_option("devices", *ds_devs, "Devices or image files")->required();
  ds->callback([&g, &action, ds_devs, ds_all] { action = [&g, ds_devs, ds_all] { return run_dump_super(g, *ds_devs, *ds_all); }; });
}

}  // namespace fsctl::cmd
