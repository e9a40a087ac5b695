// SPDX-License-Identifier: GPL-2.0-only
// `fsctl inspect dump-super`: the superblock copies of each device, as text (the fields of
// btrfs inspect-internal dump-super, -f/-a/-s) or JSON.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cmd/commands.h"
#include "cmd/item_json.h"
#include "cmd/json_members.h"
#include "lib/format/backup_root.h"
#include "lib/format/csum.h"
#include "lib/format/dev_item.h"
#include "lib/format/super.h"
#include "lib/format/feature_flags.h"
#include "lib/format/names.h"
#include "lib/io/mount_check.h"

namespace fsctl::cmd {
using namespace fsctl::format;
using json = nlohmann::ordered_json;

namespace {

json super_to_json(const SuperBlock& sb) {
  u16 ct = sb.csum_type.get();
  DevItemRecord di = dev_item_from_disk(sb.dev_item);
  json dev = {{"devid", di.devid},
              {"uuid", uuid_to_string(di.uuid)},
              {"fsid", uuid_to_string(di.fsid)},
              {"type", di.type},
              {"total_bytes", di.total_bytes},
              {"bytes_used", di.bytes_used},
              {"io_align", di.io_align},
              {"io_width", di.io_width},
              {"sector_size", di.sector_size},
              {"generation", di.generation},
              {"dev_group", di.dev_group},
              {"seek_speed", di.seek_speed},
              {"bandwidth", di.bandwidth}};
  json backups = json::array();
  for (int slot = 0; slot < NUM_BACKUP_ROOTS; ++slot) {
    BackupRootRecord b = load_backup_root(sb, slot);
    backups.push_back({{"tree_root", b.tree_root}, {"tree_root_gen", b.tree_root_gen},
                       {"chunk_root", b.chunk_root}, {"chunk_root_gen", b.chunk_root_gen},
                       {"extent_root", b.extent_root}, {"extent_root_gen", b.extent_root_gen},
                       {"fs_root", b.fs_root}, {"fs_root_gen", b.fs_root_gen},
                       {"dev_root", b.dev_root}, {"dev_root_gen", b.dev_root_gen},
                       {"csum_root", b.csum_root}, {"csum_root_gen", b.csum_root_gen},
                       {"total_bytes", b.total_bytes}, {"bytes_used", b.bytes_used},
                       {"num_devices", b.num_devices}});
  }
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

// The sys_chunk_array of `sb` as JSON (dump-super -f); an "error" member
// when it does not decode.
json sys_chunks_to_json(const SuperBlock& sb) {
  json arr = json::array();
  auto chunks = decode_sys_chunk_array(std::span<const u8>(sb.sys_chunk_array), sb.sys_chunk_array_size.get());
  if (!chunks) return json{{"error", chunks.error().message}};
  for (const auto& c : *chunks) {
    json stripes = json::array();
    for (const auto& st : c.stripes)
      stripes.push_back({{"devid", st.devid}, {"offset", st.physical}, {"dev_uuid", uuid_to_string(st.dev_uuid)}});
    arr.push_back({{"logical", c.logical}, {"length", c.length}, {"owner", c.owner}, {"stripe_len", c.stripe_len},
                   {"type", c.type}, {"type_name", block_group_flags_to_string(c.type)}, {"io_align", c.io_align},
                   {"io_width", c.io_width}, {"sector_size", c.sector_size}, {"num_stripes", c.num_stripes},
                   {"sub_stripes", c.sub_stripes}, {"stripes", stripes}});
  }
  return arr;
}

// dump-super -f: the sys_chunk_array and the backup roots with their levels,
// laid out as btrfs inspect-internal dump-super -f.
void print_super_full_text(const SuperBlock& sb) {
  json chunks = sys_chunks_to_json(sb);
  std::cout << "sys_chunk_array[" << SYSTEM_CHUNK_ARRAY_SIZE << "]:\n";
  if (chunks.is_object()) {
    std::cout << "\tERROR: " << chunks["error"].get<std::string>() << '\n';
  } else {
    int i = 0;
    for (const auto& c : chunks) {
      std::cout << "\titem " << i++ << " key (FIRST_CHUNK_TREE CHUNK_ITEM " << c["logical"].get<u64>() << ")\n"
                << "\t\tlength " << c["length"].get<u64>() << " owner " << c["owner"].get<u64>() << " stripe_len "
                << c["stripe_len"].get<u64>() << " type " << c["type_name"].get<std::string>() << '\n'
                << "\t\tio_align " << c["io_align"].get<u32>() << " io_width " << c["io_width"].get<u32>()
                << " sector_size " << c["sector_size"].get<u32>() << '\n'
                << "\t\tnum_stripes " << c["num_stripes"].get<u16>() << " sub_stripes " << c["sub_stripes"].get<u16>() << '\n';
      int n = 0;
      for (const auto& st : c["stripes"])
        std::cout << "\t\t\tstripe " << n++ << " devid " << st["devid"].get<u64>() << " offset " << st["offset"].get<u64>()
                  << "\n\t\t\tdev_uuid " << st["dev_uuid"].get<std::string>() << '\n';
    }
  }
  std::cout << "backup_roots[" << std::size(sb.super_roots) << "]:\n";
  int i = 0;
  for (const auto& b : sb.super_roots) {
    auto root = [](const char* name, u64 bytenr, u64 gen, unsigned level) {
      std::cout << "\t\t" << name << ":\t" << (std::string(name) == "backup_fs_root" ? "\t" : "") << bytenr << "\tgen: " << gen
                << "\tlevel: " << level << '\n';
    };
    std::cout << "\tbackup " << i++ << ":\n";
    root("backup_tree_root", b.tree_root.get(), b.tree_root_gen.get(), b.tree_root_level);
    root("backup_chunk_root", b.chunk_root.get(), b.chunk_root_gen.get(), b.chunk_root_level);
    root("backup_extent_root", b.extent_root.get(), b.extent_root_gen.get(), b.extent_root_level);
    root("backup_fs_root", b.fs_root.get(), b.fs_root_gen.get(), b.fs_root_level);
    root("backup_dev_root", b.dev_root.get(), b.dev_root_gen.get(), b.dev_root_level);
    root("csum_root", b.csum_root.get(), b.csum_root_gen.get(), b.csum_root_level);
    std::cout << "\t\tbackup_total_bytes:\t" << b.total_bytes.get() << "\n\t\tbackup_bytes_used:\t" << b.bytes_used.get()
              << "\n\t\tbackup_num_devices:\t" << b.num_devices.get() << "\n\n";
  }
}

// One superblock copy as text; `full` (dump-super -f): the sys_chunk_array
// and the backup roots in full after the fields, instead of one line each.
void print_super_text(const json& j, const std::string& device, u64 physical, const std::string& status,
                      const SuperBlock* full) {
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
    } else if (k == "sys_chunk_array") {
      continue;  // printed by print_super_full_text
    } else if (k == "backup_roots") {
      if (full) continue;
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
  if (full) print_super_full_text(*full);
  std::cout << '\n';
}

/// dump-super's choices: every copy (-a), one copy (-s N), the full form (-f).
struct DumpSuperOptions {
  bool all_mirrors = false;
  int copy = -1;  // -s N: 0, 1 or 2; -1: the copy in use
  bool full = false;
};

int run_dump_super(const GlobalOptions& g, const std::vector<std::string>& devs, const DumpSuperOptions& o) {
  StderrReporter rep(g);
  json out = json_header("inspect dump-super");
  out["devices"] = json::array();
  int rc = EXIT_OK;
  for (auto& path : devs) {
    // Like every read-only command: a mounted device may change under us.
    if (auto m = io::find_mount(path); m && *m)
      rep.warning(path + ": device is mounted on " + **m + "; what is read may be inconsistent");
    auto dev = io::open_device(path, {}, rep);
    if (!dev) return report_error(g, dev.error());
    auto d = volumes::read_device_supers(std::move(*dev));
    if (!d) return report_error(g, d.error());
    json dj = {{"device", path}, {"devid", d->devid}, {"used_copy", d->super_mirror}, {"copies", json::array()}};
    bool printed_asked = false;
    for (auto& c : d->copies) {
      if (!c.fits) continue;
      bool in_use = c.mirror == d->super_mirror;
      bool asked = o.copy >= 0 ? static_cast<int>(c.mirror) == o.copy : in_use;
      if (!asked && !o.all_mirrors) {
        if (!c.valid && o.copy < 0)
          rep.warning(path + ": superblock copy " + std::to_string(c.mirror) + " at " + std::to_string(c.physical) + " is damaged: " + c.problem);
        continue;
      }
      printed_asked = printed_asked || asked;
      if (in_use && o.copy < 0 && c.mirror != 0)
        rep.warning(path + ": primary superblock is damaged (" + d->copies[0].problem + "); showing copy " +
                    std::to_string(c.mirror) + " at " + std::to_string(c.physical));
      json cj = {{"mirror", c.mirror}, {"bytenr", c.physical}, {"valid", c.valid}};
      SuperBlock sb{};
      bool have = false;
      if (in_use) {
        sb = d->super;
        have = true;
      } else {
        have = static_cast<bool>(d->dev->read_at(c.physical, super_bytes(sb)));
      }
      if (!c.valid) cj["problem"] = c.problem;
      if (have && sb.magic.get() == SUPER_MAGIC) {
        cj["superblock"] = super_to_json(sb);
        if (o.full) cj["superblock"]["sys_chunk_array"] = sys_chunks_to_json(sb);
      }
      if (g.format == Format::text) {
        if (cj.contains("superblock"))
          print_super_text(cj["superblock"], path, c.physical, c.valid ? "" : "INVALID: " + c.problem, o.full ? &sb : nullptr);
        else
          std::cout << "superblock: bytenr=" << c.physical << ", device=" << path << ", INVALID: " << c.problem << "\n\n";
      }
      dj["copies"].push_back(cj);
    }
    if (o.copy >= 0 && !printed_asked) {
      return usage_error(g, path + ": superblock copy " + std::to_string(o.copy) + " lies beyond the end of the device");
    }
    out["devices"].push_back(dj);
  }
  if (g.format == Format::json) std::cout << out.dump(2) << '\n';
  return rc;
}

}  // namespace

void register_inspect_dump_super(CLI::App& inspect, const GlobalOptions& g, Action& action) {
  auto* ds = inspect.add_subcommand("dump-super", "Print the superblock of each device");
  auto ds_devs = std::make_shared<std::vector<std::string>>();
  auto ds_opt = std::make_shared<DumpSuperOptions>();
  // -a/--all and -f/--full are btrfs inspect-internal dump-super's; --all-mirrors is fsctl's older name.
  auto* ds_a = ds->add_flag("-a,--all,--all-mirrors", ds_opt->all_mirrors, "Print every superblock copy that fits the device");
  ds->add_flag("-f,--full", ds_opt->full, "Also print the sys_chunk_array and the backup roots in full (btrfs dump-super -f)");
  ds->add_option("-s,--super", ds_opt->copy, "Print superblock copy N (0: 64KiB, 1: 64MiB, 2: 256GiB), valid or not")
      ->check(CLI::Range(0, 2))
      ->excludes(ds_a);
  ds->add_option("devices", *ds_devs, "Devices or image files")->required();
  ds->callback([&g, &action, ds_devs, ds_opt] { action = [&g, ds_devs, ds_opt] { return run_dump_super(g, *ds_devs, *ds_opt); }; });
}

}  // namespace fsctl::cmd
