// SPDX-License-Identifier: GPL-2.0-only
// tree_torture: the property test of the B-tree write side and the
// transaction engine (issue 4; DESIGN.md invariants 1-4). Test-only, not an
// fsctl command. It runs K transactions of M seeded random operations on a
// scratch tree (insert, delete, delete a run, grow/shrink, update in place,
// COW-only search), keeps a model std::map<Key, bytes>, and after every
// commit re-reads the scratch tree through the read side on a fresh FsInfo
// and compares it with the model item by item. Each transaction's operations
// (keys and sizes) are planned before it starts and reserved for: by
// default by replaying the plan on a shadow of the tree
// (transaction::reserve_planned; the replay must then do exactly what the
// real run does), with `--reserve counts` from their numbers only. Used
// bytes above the reservation fail the run ("RESERVATION EXCEEDED"). It
// prints per transaction the reservation, the use and the write code's
// pushes, merges and splits, and at the end their totals ("balance:").
//
// `--mix fragment` drives the free space tree instead of the B-tree code
// (free-space bitmap conversion): transactions cycle through fill (M items
// of the maximum size appended, one leaf each, so M leaves allocated one
// after another), holes (every other item deleted: every other of those
// leaves freed, about M/2 free extents in their block group) and clear (the
// rest deleted: the holes merge again). With `--own-chunk` the first
// transaction allocates a new metadata chunk and every transaction of the
// run places its blocks there only (the other metadata groups are
// excluded), so the leaves are contiguous in a group whose thresholds the
// test knows (a 256 MiB group: bitmaps above 359 extents, extents again
// below 259).
//
// The scratch tree: objectid 200 (SCRATCH_TREE_DEFAULT), items of key types
// 2 and 9. Why btrfs check (progs 6.2, check/main.c) accepts it whatever it
// holds:
//  - check_fs_roots() only checks trees with fs_root_objectid(): 5, [256, -256]
//    and the reloc tree. 200 is none of them and no tree id anywhere (progs
//    and kernel use 1..13: 12 is the raid stripe tree and 13 the remap tree
//    in newer versions, so those are avoided).
//  - The extent walk (run_next_block) visits every tree listed by ROOT_ITEMs,
//    so our blocks need and get normal extent items with a TREE_BLOCK_REF to
//    200 (the transaction engine adds them). Its leaf loop interprets only
//    EXTENT/METADATA_ITEM, EXTENT_CSUM, CHUNK, DEV_ITEM, BLOCK_GROUP,
//    DEV_EXTENT, the back reference types, ORPHAN_ITEM and EXTENT_DATA, in any
//    tree; every other type is skipped. Types 2 and 9 are defined by no
//    kernel or progs version, so neither check nor the kernel's tree-checker
//    interpret their bytes.
//  - btrfs_check_leaf/node only check generic layout (key order, offsets,
//    nritems), which is what the engine must get right.
//
// Exit status: 0 ok, 1 mismatch or engine error, 2 usage, 4 ENOSPC
// (metadata block groups and devices full).
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cmd/env_hooks.h"
#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/fs/fs_info.h"
#include "lib/transaction/reservation.h"
#include "lib/transaction/transaction.h"
#include "tests/tools/rng.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {

constexpr u64 SCRATCH_TREE_DEFAULT = 200;
constexpr u8 TYPE_A = 2, TYPE_B = 9;  // key types no btrfs version defines
constexpr int EXIT_MISMATCH = 1, EXIT_USAGE = 2, EXIT_NOSPC = 4;

using Model = std::map<Key, std::vector<u8>>;

using fsctl::testing::Rng;

struct Options {
  std::string image;
  u64 seed = 1;
  u64 transactions = 1;
  u64 ops = 100;
  u64 tree = SCRATCH_TREE_DEFAULT;
  std::string mix = "mixed";
  std::string after_commit;
  std::string snapshots;
  std::string dump;
  bool quiet = false;
  bool reserve_counts = false;  // --reserve counts: Reservation counts instead of the planned replay
  std::string sizes = "mixed";  // item sizes: mixed or large
  bool own_chunk = false;       // --own-chunk: a new metadata chunk holds every block of the run
};

enum class Op { insert, del, del_run, grow, shrink, update, search };

struct Weights {
  int insert, del, del_run, grow, shrink, update, search;
};

Weights weights_of(const std::string& mix) {
  if (mix == "grow") return {70, 5, 1, 8, 4, 8, 4};
  if (mix == "shrink") return {10, 30, 10, 10, 10, 10, 5};  // runs of 2..64: whole leaves go
  if (mix == "churn") return {40, 30, 2, 10, 8, 7, 3};
  return {50, 15, 2, 12, 8, 10, 3};  // mixed
}

Op pick_op(Rng& rng, const Weights& w) {
  int total = w.insert + w.del + w.del_run + w.grow + w.shrink + w.update + w.search;
  int x = static_cast<int>(rng.below(static_cast<u64>(total)));
  if ((x -= w.insert) < 0) return Op::insert;
  if ((x -= w.del) < 0) return Op::del;
  if ((x -= w.del_run) < 0) return Op::del_run;
  if ((x -= w.grow) < 0) return Op::grow;
  if ((x -= w.shrink) < 0) return Op::shrink;
  if ((x -= w.update) < 0) return Op::update;
  return Op::search;
}

std::string key_str(const Key& k) {
  char b[96];
  std::snprintf(b, sizeof b, "(%" PRIu64 " %u %" PRIu64 ")", k.objectid, k.type, k.offset);
  return b;
}

// One line per item: key, size, hex bytes; the first line says whether the
// tree exists (a crash before the first commit leaves no tree).
void write_items(const std::string& file, bool present, const Model& m) {
  std::FILE* f = std::fopen(file.c_str(), "w");
  if (!f) {
    std::perror(file.c_str());
    std::exit(EXIT_MISMATCH);
  }
  std::fprintf(f, "tree %s items %zu\n", present ? "present" : "absent", m.size());
  for (auto& [k, v] : m) {
    std::fprintf(f, "%" PRIu64 " %u %" PRIu64 " %zu ", k.objectid, k.type, k.offset, v.size());
    for (u8 c : v) std::fprintf(f, "%02x", c);
    std::fputc('\n', f);
  }
  std::fclose(f);
}

// FSCTL_FAIL_AFTER_WRITES and FSCTL_RESERVATION_LOG (cmd/env_hooks.h), read in main.
const cmd::EnvHooks* g_hooks = nullptr;

[[noreturn]] void die(const std::string& what, const Error& e) {
  std::fprintf(stderr, "tree_torture: %s: %s\n", what.c_str(), e.message.c_str());
  if (g_hooks->fail_point_reached()) std::exit(cmd::FAIL_POINT_EXIT);
  std::exit(e.code == Errc::nospc ? EXIT_NOSPC : EXIT_MISMATCH);
}

template <class T>
T must(Result<T> r, const std::string& what) {
  if (!r) die(what, r.error());
  return std::move(*r);
}
void must(Status s, const std::string& what) {
  if (!s) die(what, s.error());
}

std::unique_ptr<fs::FsInfo> open_fs(const std::string& image, bool write) {
  fs::OpenOptions o;
  o.write = write;
  o.load_block_groups = write;  // the transaction needs them; the reader does not
  g_hooks->apply(o);
  return must(fs::FsInfo::open({image}, o), "opening " + image);
}

struct TreeShape {
  bool present = false;
  u8 height = 0;  // root level + 1
  std::vector<u64> blocks;  // per level
  u64 empty_leaves = 0;
};

// Walks every block of the tree with full parent checks (level, generation
// of the pointer, first key) and counts blocks per level.
Status walk(fs::FsInfo& fs, u64 bytenr, const ctree::ParentCheck& c, TreeShape& shape) {
  FSCTL_TRY_ASSIGN(auto b, fs.read_tree_block(bytenr, c));
  NodeView v = b->view();
  shape.blocks[v.level()]++;
  if (v.is_leaf()) {
    if (v.nritems() == 0) shape.empty_leaves++;
    return {};
  }
  for (u32 i = 0; i < v.nritems(); ++i) {
    ctree::ParentCheck cc;
    cc.level = v.level() - 1;
    cc.transid = v.ptr_generation(i);
    cc.first_key = v.node_key(i);
    FSCTL_TRY(walk(fs, v.blockptr(i), cc, shape));
  }
  return {};
}

// Reads the scratch tree on a fresh read-only FsInfo.
Model read_tree(const std::string& image, u64 tree, TreeShape* shape) {
  auto fs = open_fs(image, false);
  Model m;
  auto r = fs->find_root(tree);
  if (shape) *shape = TreeShape{};
  if (!r) return m;
  must(ctree::for_each_item(*fs, *r, ctree::KeyRange{}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
         auto d = leaf.item_data(slot);
         m.emplace(leaf.item_key(slot), std::vector<u8>(d.begin(), d.end()));
         return ctree::Visit::next;
       }),
       "reading tree " + std::to_string(tree));
  if (shape) {
    shape->present = true;
    shape->height = static_cast<u8>(r->level + 1);
    shape->blocks.assign(shape->height, 0);
    ctree::ParentCheck c;
    c.level = r->level;
    c.transid = r->generation;
    c.owner = tree;
    must(walk(*fs, r->bytenr, c, *shape), "walking tree " + std::to_string(tree));
    if (shape->empty_leaves && shape->height > 1) {
      std::fprintf(stderr, "tree_torture: %" PRIu64 " empty leaves in a tree of height %u\n", shape->empty_leaves, shape->height);
      std::exit(EXIT_MISMATCH);
    }
  }
  return m;
}

bool compare(const Model& want, const Model& have) {
  int shown = 0;
  auto a = want.begin();
  auto b = have.begin();
  bool same = true;
  auto report = [&](const std::string& s) {
    same = false;
    if (shown++ < 20) std::fprintf(stderr, "tree_torture: MISMATCH %s\n", s.c_str());
  };
  while (a != want.end() || b != have.end()) {
    if (b == have.end() || (a != want.end() && a->first < b->first)) {
      report("model has " + key_str(a->first) + " size " + std::to_string(a->second.size()) + ", tree does not");
      ++a;
    } else if (a == want.end() || b->first < a->first) {
      report("tree has " + key_str(b->first) + " size " + std::to_string(b->second.size()) + ", model does not");
      ++b;
    } else {
      if (a->second != b->second)
        report(key_str(a->first) + ": model size " + std::to_string(a->second.size()) + ", tree size " +
               std::to_string(b->second.size()) + (a->second.size() == b->second.size() ? " (bytes differ)" : ""));
      ++a;
      ++b;
    }
  }
  if (!same) std::fprintf(stderr, "tree_torture: %d differences (model %zu items, tree %zu)\n", shown, want.size(), have.size());
  return same;
}

void fill_random(Rng& rng, std::span<u8> d) {
  for (auto& c : d) c = static_cast<u8>(rng.next());
}

// Item sizes by key: what planning needs of the model.
using Sizes = std::map<Key, u32>;

// One planned operation; a run of deletions is planned as single ones.
struct Planned {
  Op op;
  Key key;
  u32 size = 0;  // insert: item size; grow/shrink: new size
};

// Counters of what the write code did to the scratch tree over the run.
struct Totals {
  ctree::WriteStats s;
  void add(const ctree::WriteStats& t) {
    for (int l = 0; l < MAX_LEVEL; ++l) {
      s.splits[l] += t.splits[l];
      s.pushes[l] += t.pushes[l];
      s.merges[l] += t.merges[l];
    }
    s.root_grows += t.root_grows;
    s.root_collapses += t.root_collapses;
  }
};
u64 node_sum(const std::array<u64, MAX_LEVEL>& a) {
  u64 n = 0;
  for (int l = 1; l < MAX_LEVEL; ++l) n += a[l];
  return n;
}
std::string stats_str(const ctree::WriteStats& s) {
  char b[200];
  std::snprintf(b, sizeof b, "leaf push/merge/split %" PRIu64 "/%" PRIu64 "/%" PRIu64 " node push/merge/split %" PRIu64 "/%" PRIu64
                "/%" PRIu64 " root grow/collapse %" PRIu64 "/%" PRIu64,
                s.pushes[0], s.merges[0], s.splits[0], node_sum(s.pushes), node_sum(s.merges), node_sum(s.splits), s.root_grows,
                s.root_collapses);
  return b;
}
bool same_stats(const ctree::WriteStats& a, const ctree::WriteStats& b) {
  return a.splits == b.splits && a.pushes == b.pushes && a.merges == b.merges && a.root_grows == b.root_grows &&
         a.root_collapses == b.root_collapses;
}

struct Runner {
  Options opt;
  Rng rng;
  Model model;
  u32 nodesize = 0;
  u32 max_item = 0;
  // Counters over the run.
  u64 n_ins = 0, n_del = 0, n_grow = 0, n_shrink = 0, n_upd = 0, n_search = 0, leaves_emptied = 0, max_height = 0;
  u64 height = 0, height_drops = 0;  // height after the last commit; commits that lowered it
  Totals totals;
  u64 own_chunk = 0;  // --own-chunk: logical start of the run's metadata group (0 until made)
  std::set<u64> other_groups;  // --own-chunk: the metadata groups the run must not use

  Key random_key(const Sizes& m) {
    // New keys: mostly random, some after the last or before the first key
    // (appends split at the end of the rightmost leaf, prepends change the
    // first key of every node on the leftmost path).
    u64 mode = rng.below(100);
    if (!m.empty() && mode < 12) {
      Key k = std::prev(m.end())->first;
      return Key{k.objectid + rng.range(1, 3), rng.chance(50) ? TYPE_A : TYPE_B, rng.below(1000)};
    }
    if (!m.empty() && mode < 22) {
      Key k = m.begin()->first;
      if (k.objectid > 4) return Key{k.objectid - rng.range(1, 3), rng.chance(50) ? TYPE_A : TYPE_B, rng.below(1000)};
    }
    return Key{(1ULL << 32) + rng.below(1ULL << 24), rng.chance(50) ? TYPE_A : TYPE_B, rng.below(4)};
  }

  u32 random_size() {
    u64 x = rng.below(100);
    if (opt.sizes == "large") {
      // A fifth to a third of a leaf mostly: few items per leaf, so many
      // leaves (and node pushes and merges) from few items even at 16K.
      u32 data = leaf_data_size(nodesize);
      if (x < 70) return static_cast<u32>(rng.range(data / 5, data / 3));
      if (x < 90) return static_cast<u32>(rng.range(0, 300));
      return static_cast<u32>(rng.range(max_item - 64, max_item));
    }
    if (x < 60) return static_cast<u32>(rng.range(0, 300));
    if (x < 78) return static_cast<u32>(rng.range(0, 16));
    if (x < 93) return static_cast<u32>(rng.range(300, std::min<u64>(1500, max_item)));
    return static_cast<u32>(rng.range(max_item - 64, max_item));  // near the maximum item size
  }

  // An existing key, roughly uniform; `m` must not be empty.
  Sizes::iterator random_existing(Sizes& m) {
    Key probe{(1ULL << 32) + rng.below(1ULL << 24), 0, 0};
    if (rng.chance(20)) probe = Key{rng.below(1ULL << 33), 0, 0};
    auto it = m.lower_bound(probe);
    if (it == m.end()) it = m.begin();
    return it;
  }

  // The transaction's operations, keys and sizes included, decided against
  // the model before anything happens: the reservation sees them all.
  std::vector<Planned> plan_transaction(const Weights& w) {
    Sizes sim;
    for (auto& [k, v] : model) sim.emplace_hint(sim.end(), k, static_cast<u32>(v.size()));
    std::vector<Planned> plan;
    for (u64 i = 0; i < opt.ops; ++i) {
      Op op = pick_op(rng, w);
      if (sim.empty() && op != Op::insert && op != Op::search) op = Op::insert;
      switch (op) {
        case Op::insert: {
          Key k = random_key(sim);
          while (sim.count(k)) k = random_key(sim);
          u32 size = random_size();
          sim[k] = size;
          plan.push_back({Op::insert, k, size});
          break;
        }
        case Op::del:
        case Op::del_run: {
          u32 run = op == Op::del ? 1 : static_cast<u32>(rng.range(2, w.del_run >= 10 ? 64 : 8));
          auto it = random_existing(sim);
          for (u32 j = 0; j < run && it != sim.end(); ++j) {
            plan.push_back({Op::del, it->first, 0});
            it = sim.erase(it);
          }
          break;
        }
        case Op::grow:
        case Op::shrink: {
          auto it = random_existing(sim);
          u32 old = it->second;
          u32 size;
          if (op == Op::grow) {
            if (old >= max_item) break;
            size = rng.chance(10) ? static_cast<u32>(rng.range(std::max(old + 1, max_item - 64), max_item))
                                  : static_cast<u32>(std::min<u64>(max_item, old + rng.range(1, 300)));
          } else {
            size = static_cast<u32>(rng.below(old + 1));
          }
          it->second = size;
          plan.push_back({op, it->first, size});
          break;
        }
        case Op::update:
          plan.push_back({Op::update, random_existing(sim)->first, 0});
          break;
        case Op::search:
          plan.push_back({Op::search, random_key(sim), 0});
          break;
      }
    }
    return plan;
  }

  // `--mix fragment`: fill, holes, clear, by transaction (see the top).
  std::vector<Planned> plan_fragment(u64 index) {
    std::vector<Planned> plan;
    switch ((index - 1) % 3) {
      case 0: {
        // Appended at increasing keys: each new item goes past the last
        // leaf's last item, into a new leaf (the maximum size fills it).
        u64 next = model.empty() ? (1ULL << 32) : std::prev(model.end())->first.objectid + 1;
        for (u64 i = 0; i < opt.ops; ++i) plan.push_back({Op::insert, Key{next + i, TYPE_A, 0}, max_item});
        break;
      }
      case 1: {
        u64 i = 0;
        for (auto& [k, v] : model)
          if (i++ % 2 == 0) plan.push_back({Op::del, k, 0});
        break;
      }
      default:
        for (auto& [k, v] : model) plan.push_back({Op::del, k, 0});
        break;
    }
    return plan;
  }

  // The reservation of the plan: the planned changes replayed on a shadow
  // of the tree (transaction::reserve_planned), or with `--reserve counts`
  // only their numbers (Transaction::reserve's per-change bound).
  u64 reserve(transaction::Transaction& t, const std::vector<Planned>& plan, std::optional<ctree::PlanCount>& counted) {
    if (opt.reserve_counts) {
      transaction::Reservation r;
      for (const auto& p : plan) {
        switch (p.op) {
          case Op::insert:
            r.items_inserted++;
            r.insert_bytes += p.size + sizeof(Item);
            if (p.size + sizeof(Item) > leaf_data_size(nodesize) / 2) r.items_large++;
            break;
          case Op::grow:  // a growing item may need two splits whatever the growth
            r.items_inserted++;
            r.insert_bytes += p.size + sizeof(Item);
            r.items_large++;
            break;
          case Op::del:
          case Op::del_run:
            r.items_deleted++;
            break;
          case Op::shrink:
          case Op::update:
          case Op::search:
            r.items_updated++;
            break;
        }
      }
      r.trees = {opt.tree};
      return must(t.reserve(r), "reserving");
    }
    transaction::PlannedTree pt{opt.tree, {}};
    using Kind = ctree::PlannedChange::Kind;
    for (const auto& p : plan) {
      Kind kind = p.op == Op::insert                        ? Kind::insert
                  : p.op == Op::del || p.op == Op::del_run  ? Kind::erase
                  : p.op == Op::grow || p.op == Op::shrink  ? Kind::resize
                                                            : Kind::update;
      pt.changes.push_back({kind, p.key, p.size});
    }
    std::vector<ctree::PlanCount> c;
    u64 reserved = must(transaction::reserve_planned(t, transaction::Reservation{}, {pt}, &c), "reserving");
    counted = c.at(0);
    return reserved;
  }

  void run_transaction(fs::FsInfo& fs, u64 index) {
    Weights w = weights_of(opt.mix);
    if (opt.mix == "phases") {
      // Grow for a while, then shrink hard, then churn: splits at every
      // level, then leaves and nodes emptied, merged and unlinked.
      static const char* const cycle[] = {"grow", "grow", "grow", "mixed", "shrink", "churn"};
      w = weights_of(cycle[index % 6]);
    }
    std::vector<Planned> plan = opt.mix == "fragment" ? plan_fragment(index) : plan_transaction(w);
    auto t = must(transaction::Transaction::start(fs), "starting a transaction");
    if (opt.own_chunk) {
      // Made before the reservation, which then counts its free space.
      if (!own_chunk) {
        for (auto& bg : fs.block_groups())
          if (bg.flags & BLOCK_GROUP_METADATA) other_groups.insert(bg.start);
        own_chunk = must(t->alloc_chunk(BLOCK_GROUP_METADATA), "allocating the run's metadata chunk");
        for (auto& bg : fs.block_groups())
          if (bg.start == own_chunk) std::printf("own chunk %" PRIu64 " length %" PRIu64 "\n", bg.start, bg.length);
      }
      t->exclude_block_groups(other_groups);
    }
    std::optional<ctree::PlanCount> counted;
    u64 reserved = reserve(*t, plan, counted);
    ctree::WriteRoot* root = nullptr;
    if (fs.find_root(opt.tree))
      root = must(t->root(opt.tree), "opening the scratch tree");
    else
      root = must(t->create_tree(opt.tree), "creating the scratch tree");
    ctree::WriteStats before = root->stats;
    u64 txn_emptied = 0;
    for (const auto& p : plan) {
      Key k = p.key;
      switch (p.op) {
        case Op::insert: {
          u32 size = p.size;
          std::vector<u8> data(size);
          fill_random(rng, data);
          ctree::Path path;
          must(ctree::insert_empty_item(*t, *root, k, size, path), "inserting " + key_str(k) + " size " + std::to_string(size));
          auto d = ctree::item_data_mut(*t, path);
          if (d.size() != size) die("insert", Error{Errc::corrupt, 0, "item_data_mut of " + key_str(k) + " is " + std::to_string(d.size()) + " bytes"});
          if (size) std::memcpy(d.data(), data.data(), size);
          model[k] = std::move(data);
          n_ins++;
          break;
        }
        case Op::del:
        case Op::del_run: {
          ctree::Path path;
          bool exact = must(ctree::search_slot_for_write(*t, *root, k, 0, path), "searching " + key_str(k) + " to delete");
          if (!exact) die("delete", Error{Errc::corrupt, 0, "key " + key_str(k) + " of the model is not in the tree"});
          if (path.leaf_view().nritems() == 1 && root->level > 0) txn_emptied++;
          must(ctree::delete_item(*t, *root, path), "deleting " + key_str(k));
          model.erase(k);
          n_del++;
          break;
        }
        case Op::grow:
        case Op::shrink: {
          auto it = model.find(k);
          if (it == model.end()) die("resize", Error{Errc::corrupt, 0, "key " + key_str(k) + " is not in the model"});
          u32 old = static_cast<u32>(it->second.size());
          u32 size = p.size;
          ctree::Path path;
          u32 growth = size > old ? size - old : 0;
          bool exact = must(ctree::search_slot_for_write(*t, *root, k, growth, path),
                            "searching " + key_str(k) + " to resize by +" + std::to_string(growth));
          if (!exact) die("resize", Error{Errc::corrupt, 0, "key " + key_str(k) + " of the model is not in the tree"});
          must(ctree::resize_item(*t, path, size), "resizing " + key_str(k) + " from " + std::to_string(old) + " to " + std::to_string(size));
          auto& v = it->second;
          v.resize(size, 0);
          auto d = ctree::item_data_mut(*t, path);
          if (d.size() != size) die("resize", Error{Errc::corrupt, 0, "item " + key_str(k) + " is " + std::to_string(d.size()) + " bytes after resize"});
          if (size > old && rng.chance(50)) {  // fill the new tail
            fill_random(rng, std::span<u8>(v).subspan(old));
            std::memcpy(d.data() + old, v.data() + old, size - old);
          }
          if (p.op == Op::grow) n_grow++; else n_shrink++;
          break;
        }
        case Op::update: {
          ctree::Path path;
          bool exact = must(ctree::search_slot_for_write(*t, *root, k, 0, path), "searching " + key_str(k) + " to update");
          if (!exact) die("update", Error{Errc::corrupt, 0, "key " + key_str(k) + " of the model is not in the tree"});
          auto& v = model.at(k);
          if (!v.empty()) {
            u64 a = rng.below(v.size()), n = rng.range(1, v.size() - a);
            fill_random(rng, std::span<u8>(v).subspan(a, n));
            auto d = ctree::item_data_mut(*t, path);
            std::memcpy(d.data() + a, v.data() + a, n);
          }
          n_upd++;
          break;
        }
        case Op::search: {
          ctree::Path path;
          bool exact = must(ctree::search_slot_for_write(*t, *root, k, 0, path), "searching " + key_str(k));
          if (exact != (model.count(k) > 0)) die("search", Error{Errc::corrupt, 0, "tree and model disagree on " + key_str(k)});
          n_search++;
          break;
        }
      }
    }
    ctree::WriteStats done = root->stats;
    for (int l = 0; l < MAX_LEVEL; ++l) {
      done.splits[l] -= before.splits[l];
      done.pushes[l] -= before.pushes[l];
      done.merges[l] -= before.merges[l];
    }
    done.root_grows -= before.root_grows;
    done.root_collapses -= before.root_collapses;
    totals.add(done);
    // The replay of the plan must have done exactly what the real run did.
    bool replay_ok = !counted || same_stats(counted->stats, done);
    must(t->commit(), "committing");
    u64 used = t->stats().used_bytes;
    leaves_emptied += txn_emptied;
    TreeShape shape;
    Model have = read_tree(opt.image, opt.tree, &shape);
    max_height = std::max<u64>(max_height, shape.height);
    if (height && shape.height < height) height_drops++;
    height = shape.height;
    std::string levels;
    for (u64 n : shape.blocks) levels += (levels.empty() ? "" : "/") + std::to_string(n);
    if (!opt.quiet)
      std::printf("txn %" PRIu64 " transid %" PRIu64 ": reserved %" PRIu64 " used %" PRIu64 " ratio %.2f items %zu height %u blocks/level %s %s planned %" PRIu64 " leaves_emptied %" PRIu64 " writes %" PRIu64 "\n",
                  index, t->transid(), reserved, used, used ? static_cast<double>(reserved) / static_cast<double>(used) : 0.0,
                  model.size(), shape.height, levels.c_str(), stats_str(done).c_str(), counted ? counted->blocks : 0, txn_emptied,
                  g_hooks->writes());
    std::fflush(stdout);
    bool ok = compare(model, have);
    if (used > reserved) {
      std::fprintf(stderr, "tree_torture: RESERVATION EXCEEDED in txn %" PRIu64 ": used %" PRIu64 " > reserved %" PRIu64 "\n", index, used, reserved);
      ok = false;
    }
    if (!replay_ok) {
      std::fprintf(stderr, "tree_torture: REPLAY DIFFERS in txn %" PRIu64 ": planned %s, real %s\n", index, stats_str(counted->stats).c_str(),
                   stats_str(done).c_str());
      ok = false;
    }
    if (!ok) std::exit(EXIT_MISMATCH);
  }
};

void usage() {
  std::fprintf(stderr,
               "usage: tree_torture IMAGE [--seed S] [--transactions K] [--ops M] [--tree ID]\n"
               "         [--mix mixed|grow|shrink|churn|phases] [--sizes mixed|large] [--reserve planned|counts]\n"
               "         [--mix fragment [--own-chunk]] [--after-commit CMD] [--snapshots PREFIX] [-q]\n"
               "       tree_torture IMAGE --dump FILE [--tree ID]\n");
  std::exit(EXIT_USAGE);
}

}  // namespace

int main(int argc, char** argv) {
  const cmd::EnvHooks hooks = cmd::EnvHooks::from_environment("tree_torture");
  g_hooks = &hooks;
  Options opt;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto val = [&]() -> std::string {
      if (i + 1 >= args.size()) usage();
      return args[++i];
    };
    auto num = [&]() -> u64 {
      std::string v = val();
      char* end = nullptr;
      u64 n = std::strtoull(v.c_str(), &end, 0);
      if (v.empty() || *end) usage();
      return n;
    };
    const std::string& a = args[i];
    if (a == "--seed") opt.seed = num();
    else if (a == "--transactions") opt.transactions = num();
    else if (a == "--ops") opt.ops = num();
    else if (a == "--tree") opt.tree = num();
    else if (a == "--mix") opt.mix = val();
    else if (a == "--sizes") {
      opt.sizes = val();
      if (opt.sizes != "mixed" && opt.sizes != "large") usage();
    }
    else if (a == "--after-commit") opt.after_commit = val();
    else if (a == "--own-chunk") opt.own_chunk = true;
    else if (a == "--snapshots") opt.snapshots = val();
    else if (a == "--dump") opt.dump = val();
    else if (a == "-q") opt.quiet = true;
    else if (a == "--reserve") {
      std::string v = val();
      if (v == "counts") opt.reserve_counts = true;
      else if (v != "planned") usage();
    }
    else if (!a.empty() && a[0] != '-' && opt.image.empty()) opt.image = a;
    else usage();
  }
  if (opt.image.empty()) usage();
  if (opt.tree == 0 || is_fstree(opt.tree) || opt.tree <= BLOCK_GROUP_TREE_OBJECTID) {
    std::fprintf(stderr, "tree_torture: tree %" PRIu64 " is a real tree or a subvolume; pick an unused global id\n", opt.tree);
    return EXIT_USAGE;
  }

  if (!opt.dump.empty()) {
    TreeShape shape;
    Model m = read_tree(opt.image, opt.tree, &shape);
    write_items(opt.dump, shape.present, m);
    return 0;
  }

  Runner run;
  run.opt = opt;
  run.rng = Rng{opt.seed};
  {
    TreeShape shape;
    run.model = read_tree(opt.image, opt.tree, &shape);  // reuse: the tree as the last run left it
    if (!opt.snapshots.empty()) write_items(opt.snapshots + ".0", shape.present, run.model);
  }
  auto fs = open_fs(opt.image, true);
  run.nodesize = fs->nodesize();
  run.max_item = leaf_data_size(run.nodesize) - static_cast<u32>(sizeof(Item));
  {
    TreeShape shape;
    read_tree(opt.image, opt.tree, &shape);
    run.height = shape.height;
  }
  for (u64 i = 1; i <= opt.transactions; ++i) {
    run.run_transaction(*fs, i);
    if (!opt.snapshots.empty()) write_items(opt.snapshots + "." + std::to_string(i), true, run.model);
    if (!opt.after_commit.empty()) {
      int rc = std::system(opt.after_commit.c_str());
      if (rc != 0) {
        std::fprintf(stderr, "tree_torture: after commit %" PRIu64 ": '%s' failed (status %d)\n", i, opt.after_commit.c_str(), rc);
        return EXIT_MISMATCH;
      }
    }
  }
  std::printf("done: %" PRIu64 " transactions; inserts %" PRIu64 " deletes %" PRIu64 " grows %" PRIu64 " shrinks %" PRIu64
              " updates %" PRIu64 " searches %" PRIu64 "; items %zu; max height %" PRIu64 "; leaves emptied %" PRIu64 "\n",
              opt.transactions, run.n_ins, run.n_del, run.n_grow, run.n_shrink, run.n_upd, run.n_search, run.model.size(),
              run.max_height, run.leaves_emptied);
  const ctree::WriteStats& st = run.totals.s;
  std::printf("balance: leaf pushes %" PRIu64 " merges %" PRIu64 " splits %" PRIu64 "; node pushes %" PRIu64 " merges %" PRIu64
              " splits %" PRIu64 "; root grows %" PRIu64 " collapses %" PRIu64 "; height drops %" PRIu64 "\n",
              st.pushes[0], st.merges[0], st.splits[0], node_sum(st.pushes), node_sum(st.merges), node_sum(st.splits), st.root_grows,
              st.root_collapses, run.height_drops);
  return hooks.fail_point_reached() ? cmd::FAIL_POINT_EXIT : 0;
}
