// SPDX-License-Identifier: GPL-2.0-only
// `fsctl inspect dump-tree`: tree blocks with decoded items, streamed as text or one JSON
// document, a tree, a block or every tree (log trees after the others).
#include <cstdio>
#include <iostream>
#include <memory>

#include "cmd/commands.h"
#include "cmd/json_members.h"
#include "cmd/item_json.h"
#include "lib/ctree/search.h"
#include "lib/format/root_item.h"
#include "lib/format/super.h"
#include "lib/format/names.h"
#include "lib/fs/fs_info.h"

namespace fsctl::cmd {
using namespace fsctl::format;
using json = nlohmann::ordered_json;

namespace {

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

}  // namespace

void register_inspect_dump_tree(CLI::App& inspect, const GlobalOptions& g, Action& action) {
  auto* dt = inspect.add_subcommand("dump-tree", "Print tree blocks with decoded items");
  auto dt_devs = std::make_shared<std::vector<std::string>>();
  auto dt_tree = std::make_shared<std::string>();
  auto dt_blocks = std::make_shared<std::vector<u64>>();
  dt->add_option("-t,--tree", *dt_tree, "Tree name (root, extent, chunk, dev, fs, csum, quota, uuid, free-space, block-group, data-reloc) or id");
  dt->add_option("-b,--block", *dt_blocks, "Print only the tree block at this logical bytenr (repeatable)");
  dt->add_option("devices", *dt_devs, "All devices of the filesystem")->required();
  dt->callback([&g, &action, dt_devs, dt_tree, dt_blocks] {
    action = [&g, dt_devs, dt_tree, dt_blocks] { return run_dump_tree(g, *dt_devs, *dt_tree, *dt_blocks); };
  });
}

}  // namespace fsctl::cmd
