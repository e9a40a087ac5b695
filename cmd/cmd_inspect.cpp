// SPDX-License-Identifier: GPL-2.0-only
// `fsctl inspect`: dump-super, dump-tree, tree-stats, block-groups. Each
// parses options, calls the library, renders text (stdout) or JSON (stdout).
#include <cstdio>
#include <iostream>
#include <memory>

#include "check/tree_stats.h"
#include "cmd/commands.h"
#include "cmd/item_json.h"
#include "cmd/json_members.h"
#include "lib/ctree/search.h"
#include "lib/format/backup_root.h"
#include "lib/format/csum.h"
#include "lib/format/dev_item.h"
#include "lib/format/root_item.h"
#include "lib/format/super.h"
#include "lib/format/feature_flags.h"
#include "lib/format/names.h"
#include "lib/fs/fs_info.h"
#include "lib/io/mount_check.h"

namespace fsctl::cmd {
using namespace fsctl::format;
using json = nlohmann::ordered_json;

namespace {

// ---------------------------------------------------------------- dump-super

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

// ---------------------------------------------------------------- dump-tree

// Streams blocks as text or JSON in depth-first key order, with read-ahead of
// a level-1 node's leaves before they are printed.
class TreeDumper {
 public:
  TreeDumper(fs::FsInfo& fs, const GlobalOptions& g) : fs_(fs), g_(g) {}

  Status dump_block(u64 bytenr, const ctree::ParentCheck& check, bool follow) {
    FSCTL_TRY_ASSIGN(auto b, fs_.read_tree_block(bytenr, check));
    NodeView v = b->view();
    print_block(v);
    if (v.is_leaf() || !follow) return {};
    if (v.level() == 1) {
      std::vector<ctree::BlockRequest> reqs;
      for (u32 i = 0; i < v.nritems(); ++i) reqs.push_back({v.blockptr(i), ctree::child_check(v, i)});
      FSCTL_TRY(fs_.read_tree_blocks(std::move(reqs), [](const cache::TreeBlockRef&) -> Status { return {}; }, true));
    }
    for (u32 i = 0; i < v.nritems(); ++i) FSCTL_TRY(dump_block(v.blockptr(i), ctree::child_check(v, i), true));
    return {};
  }

  void begin_tree(const std::string& title, u64 root_id) {
    if (g_.format == Format::text) {
      std::cout << title << '\n';
      return;
    }
    std::cout << (trees_ ? ",\n" : "") << "{\"root_id\":" << root_id << ",\"name\":" << json(tree_name(root_id)).dump()
              << ",\"title\":" << json(title).dump() << ",\"blocks\":[\n";
    ++trees_;
    blocks_ = 0;
  }
  void end_tree(const std::optional<Error>& err) {
    if (g_.format == Format::json) {
      std::cout << "]";
      if (err) std::cout << ",\"error\":" << json(err->message).dump();
      std::cout << "}";
    }
  }

 private:
  void print_block(const NodeView& v) {
    u32 ns = fs_.nodesize();
    if (g_.format == Format::json) {
      json bj = {{"bytenr", v.bytenr()}, {"level", v.level()}, {"nritems", v.nritems()}, {"generation", v.generation()},
                 {"owner", v.owner()}, {"flags", v.flags()}};
      json arr = json::array();
      for (u32 i = 0; i < v.nritems(); ++i) {
        if (v.is_leaf()) {
          arr.push_back({{"slot", i}, {"key", key_to_json(v.item_key(i))}, {"itemoff", v.item_offset(i)},
                         {"itemsize", v.item_size(i)},
                         {"data", item_to_json(v.item_key(i), v.item_data(i), fs_.csum_type())}});
        } else {
          arr.push_back({{"slot", i}, {"key", key_to_json(v.node_key(i))}, {"blockptr", v.blockptr(i)},
                         {"generation", v.ptr_generation(i)}});
        }
      }
      bj[v.is_leaf() ? "items" : "ptrs"] = arr;
      std::cout << (blocks_++ ? ",\n" : "") << bj.dump();
      return;
    }
    u64 used = 0;
    if (v.is_leaf()) {
      for (u32 i = 0; i < v.nritems(); ++i) used += sizeof(Item) + v.item_size(i);
      std::cout << "leaf " << v.bytenr() << " items " << v.nritems() << " free space " << leaf_data_size(ns) - used
                << " generation " << v.generation() << " owner " << tree_name(v.owner()) << '\n';
    } else {
      std::cout << "node " << v.bytenr() << " level " << int(v.level()) << " items " << v.nritems() << " free space "
                << node_max_ptrs(ns) - v.nritems() << " generation " << v.generation() << " owner "
                << tree_name(v.owner()) << '\n';
    }
    std::cout << "fs uuid " << uuid_to_string(v.fsid()) << "\nchunk uuid "
              << uuid_to_string(v.chunk_tree_uuid()) << '\n';
    for (u32 i = 0; i < v.nritems(); ++i) {
      if (v.is_leaf()) {
        Key k = v.item_key(i);
        std::cout << "\titem " << i << " key " << key_text(k) << " itemoff " << v.item_offset(i) << " itemsize "
                  << v.item_size(i) << "\n\t\t" << json_to_text_fields(item_to_json(k, v.item_data(i), fs_.csum_type()))
                  << '\n';
      } else {
        std::cout << "\tkey " << key_text(v.node_key(i)) << " block " << v.blockptr(i) << " gen " << v.ptr_generation(i) << '\n';
      }
    }
  }

  fs::FsInfo& fs_;
  const GlobalOptions& g_;
  int trees_ = 0;
  int blocks_ = 0;
};

int run_dump_tree(const GlobalOptions& g, const std::vector<std::string>& devs, const std::string& tree_arg,
                  const std::vector<u64>& block_args) {
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, false);
  if (!fs) return report_error(g, fs.error());
  // The tree asked for is looked up before anything is printed: an unknown
  // or absent tree is the error document alone, never half a report.
  std::optional<ctree::RootRef> asked;
  if (block_args.empty() && !tree_arg.empty()) {
    auto id = parse_tree_id(tree_arg);
    if (!id) return usage_error(g, "unknown tree '" + tree_arg + "'");
    asked = (*fs)->find_root(*id);
    if (!asked)
      return usage_error(g, devs[0] + ": tree " + tree_arg + " (" + std::to_string(static_cast<s64>(*id)) + ") does not exist");
  }
  TreeDumper dumper(**fs, g);
  if (g.format == Format::json) std::cout << "{\"__header\":" << json_header("inspect dump-tree")["__header"].dump() << ",\"trees\":[\n";
  std::optional<Error> first_error;
  auto dump_root = [&](const std::string& title, const ctree::RootRef& r) {
    dumper.begin_tree(title, r.root_id);
    ctree::ParentCheck c;
    c.transid = r.generation;
    c.level = r.level;
    auto st = dumper.dump_block(r.bytenr, c, true);
    std::optional<Error> err;
    if (!st) {
      err = st.error().context("dumping tree " + tree_name(r.root_id));
      if (!first_error) first_error = err;
    }
    dumper.end_tree(err);
  };
  if (!block_args.empty()) {
    for (u64 b : block_args) {
      dumper.begin_tree("block " + std::to_string(b), 0);
      auto st = dumper.dump_block(b, {}, false);
      std::optional<Error> err;
      if (!st) {
        err = st.error();
        if (!first_error) first_error = err;
      }
      dumper.end_tree(err);
    }
  } else if (asked) {
    dump_root(tree_name(asked->root_id) + " tree", *asked);
  } else {
    dump_root("root tree", (*fs)->tree_root());
    dump_root("chunk tree", (*fs)->chunk_root());
    // A log tree that waits for replay: its root tree (written by the commit
    // after the superblock's, kernel btrfs_replay_log) comes after the chunk
    // tree and each subvolume's log tree after the other trees, as progs
    // prints them.
    std::vector<std::pair<Key, ctree::RootRef>> logs;
    const SuperBlock& sb = (*fs)->super();
    if (sb.log_root.get()) {
      ctree::RootRef lr{TREE_LOG_OBJECTID, sb.log_root.get(), sb.log_root_level, sb.generation.get() + 1};
      dump_root("log root tree", lr);
      auto st = ctree::for_each_item(**fs, lr, {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
        Key k = leaf.item_key(slot);
        if (k.type != KeyType::ROOT_ITEM) return ctree::Visit::next;
        FSCTL_TRY_ASSIGN(auto ri, decode_root_item(leaf.item_data(slot)));
        logs.push_back({k, ctree::RootRef{k.objectid, ri.bytenr, ri.level, ri.generation}});
        return ctree::Visit::next;
      });
      if (!st && !first_error) first_error = st.error().context("reading the log root tree");
    }
    for (auto& e : (*fs)->root_entries()) {
      ctree::RootRef r{e.key.objectid, e.item.bytenr, e.item.level, e.item.generation};
      dump_root(tree_name(e.key.objectid) + " tree key " + key_text(e.key), r);
    }
    for (auto& [k, r] : logs) dump_root(tree_name(k.objectid) + " tree key " + key_text(k), r);
  }
  // A tree that could not be read: its "error" member, and the first such
  // error as the document's "error" (the shape of the error document).
  if (g.format == Format::json) {
    std::cout << "]";
    if (first_error) std::cout << ",\"error\":" << error_json(*first_error, devs).dump();
    std::cout << "}\n";
  }
  std::cout.flush();
  return first_error ? print_error(*first_error) : EXIT_OK;
}

// ---------------------------------------------------------------- tree-stats

int run_tree_stats(const GlobalOptions& g, const std::vector<std::string>& devs) {
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, false);
  if (!fs) return report_error(g, fs.error());
  auto r = check::tree_stats(**fs);
  if (!r) return report_error(g, r.error());
  if (g.format == Format::json) {
    json out = json_header("inspect tree-stats");
    json trees = json::array();
    for (auto& t : r->trees)
      trees.push_back({{"root_id", static_cast<s64>(t.root_id) < 0 ? json(static_cast<s64>(t.root_id)) : json(t.root_id)},
                       {"key_offset", t.key_offset}, {"name", t.name}, {"height", t.height}, {"nodes", t.nodes},
                       {"leaves", t.leaves}, {"bytes", t.bytes}, {"items", t.items}, {"skipped", t.skipped}});
    out["nodesize"] = (*fs)->nodesize();
    out["trees"] = trees;
    out["unique_blocks"] = r->unique_blocks;
    out["unique_bytes"] = r->unique_bytes;
    out["bytes_read"] = r->bytes_read;
    out["seconds"] = r->seconds;
    std::cout << out.dump(2) << '\n';
    return EXIT_OK;
  }
  const UnitMode units = g.units_or(UNITS_RAW);  // bytes unless a unit option is given
  std::printf("%-24s %8s %6s %10s %10s %14s %12s\n", "tree", "key.off", "height", "nodes", "leaves", units.raw() ? "bytes" : "size", "items");
  for (auto& t : r->trees) {
    if (t.skipped) {
      std::printf("%-24s %8llu %6u   (being deleted, not walked)\n", t.name.c_str(), static_cast<unsigned long long>(t.key_offset), t.height);
      continue;
    }
    std::printf("%-24s %8llu %6u %10llu %10llu %14s %12llu\n", t.name.c_str(), static_cast<unsigned long long>(t.key_offset),
                t.height, static_cast<unsigned long long>(t.nodes), static_cast<unsigned long long>(t.leaves),
                format_bytes(t.bytes, units).c_str(), static_cast<unsigned long long>(t.items));
  }
  std::printf("unique tree blocks %llu (%s), read %s in %.3f s\n", static_cast<unsigned long long>(r->unique_blocks),
              bytes_phrase(r->unique_bytes, units).c_str(), bytes_phrase(r->bytes_read, units).c_str(), r->seconds);
  return EXIT_OK;
}

// ---------------------------------------------------------------- block-groups

int run_block_groups(const GlobalOptions& g, const std::vector<std::string>& devs) {
  StderrReporter rep(g);
  auto fs = open_read_only(devs, g, rep, true);
  if (!fs) return report_error(g, fs.error());
  const auto& st = (*fs)->bg_tree_state();
  if (g.format == Format::json) {
    json out = json_header("inspect block-groups");
    out["bg_tree_state"] = bg_tree_state_json(st);
    json list = json::array();
    for (auto& bg : (*fs)->block_groups())
      list.push_back({{"start", bg.start}, {"length", bg.length}, {"used", bg.used}, {"flags", bg.flags},
                      {"flags_name", block_group_flags_to_string(bg.flags)}, {"profile", profile_name(bg.flags)},
                      {"chunk_objectid", bg.chunk_objectid}, {"item_tree", tree_name(bg.item_tree)}});
    out["block_groups"] = list;
    std::cout << out.dump(2) << '\n';
    return EXIT_OK;
  }
  std::printf("block group items: %s (%llu in the block group tree, %llu in the extent tree)\n", st.describe().c_str(),
              static_cast<unsigned long long>(st.in_bg_tree), static_cast<unsigned long long>(st.in_extent_tree));
  // Start is an address, always in bytes; length and used follow the unit options (default bytes).
  const UnitMode units = g.units_or(UNITS_RAW);
  std::printf("%16s %14s %14s %-20s %-8s %s\n", "start", "length", "used", "flags", "profile", "item in");
  for (auto& bg : (*fs)->block_groups())
    std::printf("%16llu %14s %14s %-20s %-8s %s\n", static_cast<unsigned long long>(bg.start),
                format_bytes(bg.length, units).c_str(), format_bytes(bg.used, units).c_str(),
                block_group_flags_to_string(bg.flags).c_str(), profile_name(bg.flags).c_str(),
                tree_name(bg.item_tree).c_str());
  return EXIT_OK;
}

}  // namespace

void register_inspect(CLI::App& app, const GlobalOptions& g, Action& action) {
  auto* inspect = app.add_subcommand("inspect", "Read-only dumps of an unmounted filesystem");
  inspect->require_subcommand(1);
  register_inspect_usage(*inspect, g, action);

  auto* ds = inspect->add_subcommand("dump-super", "Print the superblock of each device");
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

  auto* dt = inspect->add_subcommand("dump-tree", "Print tree blocks with decoded items");
  auto dt_devs = std::make_shared<std::vector<std::string>>();
  auto dt_tree = std::make_shared<std::string>();
  auto dt_blocks = std::make_shared<std::vector<u64>>();
  dt->add_option("-t,--tree", *dt_tree, "Tree name (root, extent, chunk, dev, fs, csum, quota, uuid, free-space, block-group, data-reloc) or id");
  dt->add_option("-b,--block", *dt_blocks, "Print only the tree block at this logical bytenr (repeatable)");
  dt->add_option("devices", *dt_devs, "All devices of the filesystem")->required();
  dt->callback([&g, &action, dt_devs, dt_tree, dt_blocks] {
    action = [&g, dt_devs, dt_tree, dt_blocks] { return run_dump_tree(g, *dt_devs, *dt_tree, *dt_blocks); };
  });

  auto* ts = inspect->add_subcommand("tree-stats", "Height, nodes, leaves and bytes of every tree (reads every block once)");
  auto ts_devs = std::make_shared<std::vector<std::string>>();
  ts->add_option("devices", *ts_devs, "All devices of the filesystem")->required();
  ts->callback([&g, &action, ts_devs] { action = [&g, ts_devs] { return run_tree_stats(g, *ts_devs); }; });

  auto* bg = inspect->add_subcommand("block-groups", "List block groups and which tree holds their items");
  auto bg_devs = std::make_shared<std::vector<std::string>>();
  bg->add_option("devices", *bg_devs, "All devices of the filesystem")->required();
  bg->callback([&g, &action, bg_devs] { action = [&g, bg_devs] { return run_block_groups(g, *bg_devs); }; });
}

}  // namespace fsctl::cmd
