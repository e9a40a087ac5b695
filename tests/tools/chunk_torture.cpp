// SPDX-License-Identifier: GPL-2.0-only
// chunk_torture: drives chunk allocation and block group removal of the
// transaction engine on real images (issue 4 leftovers; DESIGN.md "Writing",
// invariants 1-4). Test-only, not an fsctl command.
//
//   chunk_torture DEV... fill [--seed S] [--ops M] [--item-size B] [--new-chunks N]
//                            [--max-transactions K | --transactions K] [--exclude metadata|system|all]
//                            [--rehearse]
//     Inserts items into the scratch tree 200 (see tree_torture.cpp for why
//     btrfs check accepts any content there), M per transaction (reserved
//     first), until N metadata block groups more than at the start exist
//     (the allocator creates them by itself when the groups are full;
//     --exclude makes every existing group of that kind unusable, so the
//     first allocation of that kind needs a new chunk: metadata for tree
//     200, system for the chunk tree). Then re-reads the scratch tree on a
//     fresh read-only open and compares it with the model.
//     --max-transactions K: more than K transactions needed is an error
//     (exit 1). --transactions K: stop after K transactions (exit 0, or 4
//     if one did not fit before), for filling in small known steps.
//   chunk_torture DEV... alloc FLAGS [--count N] [--keep-empty] [--then-remove]
//                             [--exclude metadata|system|all]
//     Transaction::alloc_chunk(FLAGS) N times in one transaction, then commit.
//     FLAGS: comma-separated type and profile: metadata|system[,single|dup|
//     raid0|raid1|raid1c3|raid1c4|raid10]. --keep-empty excludes the new
//     groups from allocation so that they stay empty (used 0);
//     --then-remove asks to remove them in the same transaction (refused).
//   chunk_torture DEV... remove START...   remove those block groups (one transaction)
//   chunk_torture DEV... remove-empty TYPE   remove every block group of TYPE
//     (metadata or system) whose item says used 0 (one transaction)
//   chunk_torture DEV... clear   delete every item of tree 200 and the tree
//
// Prints one line per block group created or removed: "new LOGICAL LENGTH
// FLAGS" / "removed LOGICAL LENGTH FLAGS", and "writes N" (write requests
// counted by the fail point, for crash tests). Exit status: 0 ok, 1 error
// or mismatch, 2 usage, 3 refused (Errc::invalid_argument), 4 ENOSPC,
// 5 unsupported.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cmd/env_hooks.h"
#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/names.h"
#include "lib/fs/fs_info.h"
#include "lib/transaction/batch_runner.h"
#include "lib/transaction/reservation.h"
#include "lib/transaction/transaction.h"
#include "tests/tools/rng.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {

constexpr u64 SCRATCH_TREE = 200;
constexpr u8 TYPE_A = 2;  // a key type no btrfs version defines (tree_torture.cpp)
constexpr int EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_REFUSED = 3, EXIT_NOSPC = 4, EXIT_UNSUPPORTED = 5;

using Model = std::map<Key, std::vector<u8>>;

using fsctl::testing::Rng;

// FSCTL_FAIL_AFTER_WRITES and FSCTL_RESERVATION_LOG (cmd/env_hooks.h), read in main.
const cmd::EnvHooks* g_hooks = nullptr;

[[noreturn]] void die(const std::string& what, const Error& e) {
  std::fprintf(stderr, "chunk_torture: %s: %s\n", what.c_str(), e.message.c_str());
  std::fflush(stdout);
  if (g_hooks->fail_point_reached()) std::exit(cmd::FAIL_POINT_EXIT);
  switch (e.code) {
    case Errc::nospc: std::exit(EXIT_NOSPC);
    case Errc::invalid_argument: std::exit(EXIT_REFUSED);
    case Errc::unsupported: std::exit(EXIT_UNSUPPORTED);
    default: std::exit(EXIT_ERROR);
  }
}
template <class T>
T must(Result<T> r, const std::string& what) {
  if (!r) die(what, r.error());
  return std::move(*r);
}
void must(Status s, const std::string& what) {
  if (!s) die(what, s.error());
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: chunk_torture DEV... fill [--seed S] [--ops M] [--item-size B] [--new-chunks N] [--max-transactions K | --transactions K] [--rehearse]\n"
               "                                 [--exclude metadata|system|all]\n"
               "       chunk_torture DEV... alloc FLAGS [--count N] [--keep-empty] [--then-remove] [--exclude metadata|system|all]\n"
               "       chunk_torture DEV... remove START...\n"
               "       chunk_torture DEV... remove-empty metadata|system\n"
               "       chunk_torture DEV... clear\n");
  std::exit(EXIT_USAGE);
}

std::unique_ptr<fs::FsInfo> open_fs(const std::vector<std::string>& devs, bool write) {
  fs::OpenOptions o;
  o.write = write;
  g_hooks->apply(o);
  return must(fs::FsInfo::open(devs, o), "opening " + devs[0]);
}

u64 parse_flags(const std::string& text) {
  u64 flags = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string w = text.substr(pos, end - pos);
    if (w == "metadata") flags |= BLOCK_GROUP_METADATA;
    else if (w == "system") flags |= BLOCK_GROUP_SYSTEM;
    else if (w == "data") flags |= BLOCK_GROUP_DATA;
    else if (w == "single") {}
    else if (w == "dup") flags |= BLOCK_GROUP_DUP;
    else if (w == "raid0") flags |= BLOCK_GROUP_RAID0;
    else if (w == "raid1") flags |= BLOCK_GROUP_RAID1;
    else if (w == "raid1c3") flags |= BLOCK_GROUP_RAID1C3;
    else if (w == "raid1c4") flags |= BLOCK_GROUP_RAID1C4;
    else if (w == "raid10") flags |= BLOCK_GROUP_RAID10;
    else if (w == "raid5") flags |= BLOCK_GROUP_RAID5;
    else usage();
    pos = end + 1;
  }
  return flags;
}

std::map<u64, fs::BlockGroup> block_groups(const fs::FsInfo& fs) {
  std::map<u64, fs::BlockGroup> m;
  for (auto& bg : fs.block_groups()) m[bg.start] = bg;
  return m;
}

void report_changes(const std::map<u64, fs::BlockGroup>& before, const std::map<u64, fs::BlockGroup>& after) {
  for (auto& [s, bg] : after)
    if (!before.count(s)) std::printf("new %" PRIu64 " %" PRIu64 " %s\n", s, bg.length, block_group_flags_to_string(bg.flags).c_str());
  for (auto& [s, bg] : before)
    if (!after.count(s)) std::printf("removed %" PRIu64 " %" PRIu64 " %s\n", s, bg.length, block_group_flags_to_string(bg.flags).c_str());
}

Model read_tree(const std::vector<std::string>& devs) {
  auto fs = open_fs(devs, false);
  Model m;
  auto r = fs->find_root(SCRATCH_TREE);
  if (!r) return m;
  must(ctree::for_each_item(*fs, *r, {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
         auto d = leaf.item_data(slot);
         m.emplace(leaf.item_key(slot), std::vector<u8>(d.begin(), d.end()));
         return ctree::Visit::next;
       }),
       "reading tree 200");
  return m;
}

// The existing block groups of kind `what` (metadata, system or all).
std::set<u64> existing_groups(const fs::FsInfo& fs, const std::string& what) {
  std::set<u64> out;
  for (auto& bg : fs.block_groups()) {
    bool sys = bg.flags & BLOCK_GROUP_SYSTEM, meta = (bg.flags & BLOCK_GROUP_METADATA) && !sys;
    if ((what == "metadata" && meta) || (what == "system" && sys) || (what == "all" && (sys || meta))) out.insert(bg.start);
  }
  if (what != "metadata" && what != "system" && what != "all") usage();
  return out;
}

u64 metadata_groups(const fs::FsInfo& fs) {
  u64 n = 0;
  for (auto& bg : fs.block_groups())
    if ((bg.flags & BLOCK_GROUP_METADATA) && !(bg.flags & BLOCK_GROUP_SYSTEM)) ++n;
  return n;
}

int run_fill(const std::vector<std::string>& devs, const std::vector<std::string>& args) {
  u64 seed = 1, ops = 200, item_size = 1000, new_chunks = 1, max_txn = 1000, stop_after = 0;
  bool rehearse = false;
  std::string exclude;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto num = [&]() -> u64 {
      if (i + 1 >= args.size()) usage();
      return std::strtoull(args[++i].c_str(), nullptr, 0);
    };
    if (args[i] == "--seed") seed = num();
    else if (args[i] == "--ops") ops = num();
    else if (args[i] == "--item-size") item_size = num();
    else if (args[i] == "--new-chunks") new_chunks = num();
    else if (args[i] == "--max-transactions") max_txn = num();
    else if (args[i] == "--transactions") stop_after = num();
    else if (args[i] == "--rehearse") rehearse = true;
    else if (args[i] == "--exclude" && i + 1 < args.size()) exclude = args[++i];
    else usage();
  }
  Model model = read_tree(devs);
  auto fs = open_fs(devs, true);
  auto start_bgs = block_groups(*fs);
  u64 start_meta = metadata_groups(*fs);
  std::set<u64> excluded;
  if (!exclude.empty()) excluded = existing_groups(*fs, exclude);
  u32 max_item = leaf_data_size(fs->nodesize()) - static_cast<u32>(sizeof(Item));
  item_size = std::min<u64>(item_size, max_item);
  Rng rng{seed};
  u64 txn = 0;
  while (metadata_groups(*fs) < start_meta + new_chunks) {
    if (stop_after != 0 && txn >= stop_after) break;
    if (txn++ >= max_txn) {
      std::fprintf(stderr, "chunk_torture: %" PRIu64 " transactions created %" PRIu64 " of %" PRIu64 " new metadata block groups\n", max_txn,
                   metadata_groups(*fs) - start_meta, new_chunks);
      return EXIT_ERROR;
    }
    transaction::Reservation r;
    r.items_inserted = ops;
    if (item_size + sizeof(Item) > leaf_data_size(fs->nodesize()) / 2) r.items_large = ops;
    r.trees = {SCRATCH_TREE};
    // One transaction of the fill as a job of the batch runner: its items
    // drawn from a copy of the generator, so that the rehearsal (--rehearse:
    // the reservation by rehearsal, exact, as small fsctl operations
    // reserve, so the fill goes on until N items no longer fit at all) and
    // the real run insert the same ones; otherwise the reservation from
    // counts.
    struct FillJob final : transaction::BatchJob {
      Rng g;
      Model m;
      const transaction::Reservation& r;
      const std::set<u64>& excluded;
      u64 ops, item_size;
      bool finished = false;
      FillJob(Rng g0, Model m0, const transaction::Reservation& rr, const std::set<u64>& ex, u64 n, u64 size)
          : g(g0), m(std::move(m0)), r(rr), excluded(ex), ops(n), item_size(size) {}
      bool done() const override { return finished; }
      u64 next_units(u64) const override { return 0; }
      std::optional<u64> estimate_blocks(u64) const override { return 0; }
      void prepare(transaction::Transaction& tx) override { tx.exclude_block_groups(excluded); }
      Result<u64> reserve_bound(transaction::Transaction& tx, u64) override { return tx.reserve(r); }
      Status apply(transaction::Transaction& tx, u64) override {
        ctree::WriteRoot* root = nullptr;
        if (tx.fs().find_root(SCRATCH_TREE)) {
          FSCTL_TRY_ASSIGN(root, tx.root(SCRATCH_TREE));
        } else {
          FSCTL_TRY_ASSIGN(root, tx.create_tree(SCRATCH_TREE));
        }
        for (u64 i = 0; i < ops; ++i) {
          Key k{(1ULL << 32) + g.below(1ULL << 30), TYPE_A, g.below(1ULL << 20)};
          while (m.count(k)) k.offset++;
          std::vector<u8> data(item_size);
          for (auto& c : data) c = static_cast<u8>(g.next());
          FSCTL_TRY(ctree::insert_item(tx, *root, k, data));
          m[k] = std::move(data);
        }
        return {};
      }
      Status committed(u64) override {
        finished = true;
        return {};
      }
      std::string progress_note() const override { return "fill transaction committed"; }
    };
    FillJob job(rng, model, r, excluded, ops, item_size);
    FillJob* real = &job;
    transaction::JobFactory make = [&](fs::FsInfo&) -> Result<std::unique_ptr<transaction::BatchJob>> {
      return std::unique_ptr<transaction::BatchJob>(std::make_unique<FillJob>(rng, model, r, excluded, ops, item_size));
    };
    transaction::RunnerOptions ro;
    ro.rehearse = rehearse;
    u64 transid = fs->super().generation.get() + 1;
    auto run = must(transaction::run_batches(*fs, job, make, ro), "filling");
    rng = real->g;
    model = std::move(real->m);
    std::printf("txn %" PRIu64 " transid %" PRIu64 ": items %zu reserved %" PRIu64 " used %" PRIu64 " metadata block groups %" PRIu64 "\n", txn,
                transid, model.size(), run.reserved_bytes, run.used_bytes, metadata_groups(*fs));
  }
  report_changes(start_bgs, block_groups(*fs));
  fs.reset();
  Model have = read_tree(devs);
  if (have != model) {
    std::fprintf(stderr, "chunk_torture: tree 200 has %zu items, the model %zu (or their bytes differ)\n", have.size(), model.size());
    return EXIT_ERROR;
  }
  std::printf("tree 200: %zu items as the model\n", have.size());
  std::printf("writes %" PRIu64 "\n", g_hooks->writes());
  return 0;
}

int run_alloc(const std::vector<std::string>& devs, const std::vector<std::string>& args) {
  if (args.empty()) usage();
  u64 flags = parse_flags(args[0]);
  u64 count = 1;
  bool keep_empty = false, then_remove = false;
  std::string exclude;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--count" && i + 1 < args.size()) count = std::strtoull(args[++i].c_str(), nullptr, 0);
    else if (args[i] == "--keep-empty") keep_empty = true;
    else if (args[i] == "--then-remove") then_remove = true;
    else if (args[i] == "--exclude" && i + 1 < args.size()) exclude = args[++i];
    else usage();
  }
  auto fs = open_fs(devs, true);
  auto before = block_groups(*fs);
  auto t = must(transaction::Transaction::start(*fs), "starting a transaction");
  if (!exclude.empty()) t->exclude_block_groups(existing_groups(*fs, exclude));
  // Per chunk: its CHUNK_ITEM, up to four DEV_EXTENTs, the block group item,
  // FREE_SPACE_INFO and one extent inserted; DEV_ITEMs updated (as the
  // removal below counts its deletions).
  transaction::Reservation r;
  r.items_inserted = count * 8;
  r.items_updated = count * 4;
  r.trees_touched = 5;
  must(t->reserve(r), "reserving");
  std::set<u64> made;
  for (u64 i = 0; i < count; ++i) {
    u64 logical = must(t->alloc_chunk(flags), "allocating a " + block_group_flags_to_string(flags) + " chunk");
    made.insert(logical);
  }
  if (keep_empty) t->exclude_block_groups(made);
  if (then_remove)  // refused: the transaction created it
    for (u64 s : made) must(t->remove_block_group(s), "removing block group " + std::to_string(s) + " in the transaction that created it");
  must(t->commit(), "committing");
  report_changes(before, block_groups(*fs));
  std::printf("writes %" PRIu64 "\n", g_hooks->writes());
  return 0;
}

int run_remove(const std::vector<std::string>& devs, const std::vector<std::string>& args, bool empty_of_type) {
  if (args.empty()) usage();
  auto fs = open_fs(devs, true);
  auto before = block_groups(*fs);
  std::vector<u64> starts;
  if (empty_of_type) {
    u64 type = args[0] == "metadata" ? BLOCK_GROUP_METADATA : args[0] == "system" ? BLOCK_GROUP_SYSTEM : 0;
    if (!type || args.size() != 1) usage();
    for (auto& bg : fs->block_groups())
      if ((bg.flags & BLOCK_GROUP_TYPE_MASK) == type && bg.used == 0) starts.push_back(bg.start);
    if (starts.empty()) {
      std::fprintf(stderr, "chunk_torture: no empty %s block group\n", args[0].c_str());
      return EXIT_REFUSED;
    }
  } else {
    for (auto& a : args) starts.push_back(std::strtoull(a.c_str(), nullptr, 0));
  }
  auto t = must(transaction::Transaction::start(*fs), "starting a transaction");
  transaction::Reservation r;
  r.items_deleted = starts.size() * 8;
  r.items_updated = starts.size() * 4;
  r.trees_touched = 5;
  must(t->reserve(r), "reserving");
  for (u64 s : starts) must(t->remove_block_group(s), "removing block group " + std::to_string(s));
  must(t->commit(), "committing");
  report_changes(before, block_groups(*fs));
  std::printf("writes %" PRIu64 "\n", g_hooks->writes());
  return 0;
}

int run_clear(const std::vector<std::string>& devs) {
  Model model = read_tree(devs);
  auto fs = open_fs(devs, true);
  if (!fs->find_root(SCRATCH_TREE)) return 0;
  auto t = must(transaction::Transaction::start(*fs), "starting a transaction");
  transaction::Reservation r;
  r.items_deleted = model.size();
  r.trees = {SCRATCH_TREE};
  must(t->reserve(r), "reserving");
  auto* root = must(t->root(SCRATCH_TREE), "opening tree 200");
  for (auto& [k, v] : model) {
    ctree::Path p;
    bool exact = must(ctree::search_slot_for_write(*t, *root, k, 0, p), "searching");
    if (!exact) die("clear", Error{Errc::corrupt, 0, "item vanished"});
    must(ctree::delete_item(*t, *root, p), "deleting");
  }
  must(t->delete_tree(SCRATCH_TREE), "deleting tree 200");
  must(t->commit(), "committing");
  std::printf("cleared %zu items\nwrites %" PRIu64 "\n", model.size(), g_hooks->writes());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const fsctl::cmd::EnvHooks hooks = fsctl::cmd::EnvHooks::from_environment("chunk_torture");
  g_hooks = &hooks;
  std::vector<std::string> devs, args;
  std::string cmd;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (cmd.empty() && (a == "fill" || a == "alloc" || a == "remove" || a == "remove-empty" || a == "clear"))
      cmd = a;
    else if (cmd.empty())
      devs.push_back(a);
    else
      args.push_back(a);
  }
  if (devs.empty() || cmd.empty()) usage();
  int rc = cmd == "fill" ? run_fill(devs, args)
           : cmd == "alloc" ? run_alloc(devs, args)
           : cmd == "remove" ? run_remove(devs, args, false)
           : cmd == "remove-empty" ? run_remove(devs, args, true)
                                   : run_clear(devs);
  return hooks.fail_point_reached() ? fsctl::cmd::FAIL_POINT_EXIT : rc;
}
