// SPDX-License-Identifier: GPL-2.0-only
// Balance driver (balance.h): refusals, block group selection in the kernel's
// order (highest logical start first, kernel __btrfs_balance), batches.
#include "lib/relocation/balance.h"

#include <algorithm>
#include <functional>
#include <chrono>

#include "lib/base/phase_timer.h"
#include "lib/ctree/search.h"
#include "lib/format/items.h"
#include "lib/format/names.h"
#include "lib/transaction/transaction.h"
#include "lib/volumes/raid_profiles.h"

namespace fsctl::relocation {
using namespace fsctl::format;

namespace {

Status refuse_unfinished_work(fs::FsInfo& fs) {
  // A kernel balance that was paused or interrupted keeps its state in a
  // BALANCE_ITEM (BALANCE_OBJECTID, TEMPORARY_ITEM, 0) of the root tree and
  // resumes at mount (kernel volumes.c btrfs_recover_balance).
  FSCTL_TRY_ASSIGN(auto item, ctree::lookup_item(fs, fs.tree_root(), Key{BALANCE_OBJECTID, KeyType::TEMPORARY_ITEM, 0}));
  if (item)
    return make_error(Errc::unsupported, "a kernel balance is paused or was interrupted (BALANCE_ITEM in the root tree): "
                                         "mount the filesystem and let it finish (btrfs balance resume) or cancel it "
                                         "(mount -o skip_balance, btrfs balance cancel), then run fsctl balance");
  for (const auto& e : fs.root_entries()) {
    if (e.key.objectid == TREE_RELOC_OBJECTID)
      return make_error(Errc::unsupported, "relocation trees of an interrupted kernel balance remain (ROOT_ITEM " + key_to_string(e.key) +
                                               "): mount the filesystem once so the kernel merges or drops them, then run fsctl balance");
    if (is_fstree(e.key.objectid) && e.item.refs == 0)
      return make_error(Errc::unsupported, "subvolume " + std::to_string(e.key.objectid) +
                                               " is being deleted (ROOT_ITEM refs 0): mount the filesystem and wait for `btrfs subvolume sync`, then run fsctl balance");
  }
  for (const auto& bg : fs.block_groups())
    if ((bg.flags & BLOCK_GROUP_DATA) && (bg.flags & BLOCK_GROUP_METADATA))
      return make_error(Errc::unsupported, "block group " + std::to_string(bg.start) +
                                               " mixes data and metadata (mixed-bg filesystem): metadata cannot be balanced alone, "
                                               "as with the kernel balance data and metadata together (fsctl balances metadata only)");
  return {};
}


}  // namespace

Result<BalanceReport> balance_metadata(fs::FsInfo& fs, const BalanceOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  BalanceReport rep;
  rep.dry_run = opts.dry_run;
  FSCTL_TRY(refuse_unfinished_work(fs));
  // convert=PROFILE: the profile must be one the devices can hold (kernel
  // btrfs_balance: "unable to start balance with target ... profile"), and
  // RAID5/6 are not written by fsctl.
  std::size_t ndevs = fs.dev_items().size();
  for (const auto* f : {&opts.metadata, &opts.system}) {
    if (!*f || !(*f)->convert) continue;
    u64 p = *(*f)->convert;
    if (p & (BLOCK_GROUP_RAID5 | BLOCK_GROUP_RAID6))
      return make_error(Errc::unsupported, "balance convert=" + profile_name(p) + ": fsctl does not write RAID5/RAID6 chunks");
    const volumes::RaidProfile* prof = volumes::raid_profile(p);
    if (prof && static_cast<std::size_t>(prof->devs_min) > ndevs)
      return make_error(Errc::invalid_argument, "balance convert=" + profile_name(p) + " needs at least " + std::to_string(prof->devs_min) +
                                                    " devices; the filesystem has " + std::to_string(ndevs));
    // Fewer copies than now (kernel btrfs_balance: "balance: reduces
    // metadata redundancy, use --force if you want this"): only with -f.
    bool system = f == &opts.system;
    int have = 0;
    for (const auto& bg : fs.block_groups())
      if ((bg.flags & BLOCK_GROUP_TYPE_MASK) == (system ? BLOCK_GROUP_SYSTEM : BLOCK_GROUP_METADATA))
        if (const auto* r = volumes::raid_profile(bg.flags)) have = std::max(have, r->ncopies);
    if (prof && prof->ncopies < have && !opts.force)
      return make_error(Errc::invalid_argument, "balance convert=" + profile_name(p) + " reduces " + (system ? "system" : "metadata") +
                                                    " redundancy (" + std::to_string(have) + " copies now, " + std::to_string(prof->ncopies) +
                                                    " after): add -f if you want this");
  }
  // With convert, every transaction allocates only from block groups of the
  // target profile and makes new chunks with it.
  auto steer = [&](transaction::Transaction& t) {
    for (bool system : {false, true}) {
      const auto& f = system ? opts.system : opts.metadata;
      if (!f || !f->convert) continue;
      u64 type = system ? BLOCK_GROUP_SYSTEM : BLOCK_GROUP_METADATA;
      std::set<u64> other;
      for (const auto& bg : fs.block_groups())
        if ((bg.flags & BLOCK_GROUP_TYPE_MASK) == type && (bg.flags & BLOCK_GROUP_PROFILE_MASK) != *f->convert) other.insert(bg.start);
      t.exclude_block_groups(other);
      t.set_chunk_profile(type | *f->convert);
    }
  };

  // Selection per kind (kernel should_balance_chunk with the kind's
  // filters, limit counted per kind), then all of them processed from the
  // highest start down, as the kernel walks the chunk tree.
  std::vector<fs::BlockGroup> bgs(fs.block_groups().begin(), fs.block_groups().end());
  std::sort(bgs.begin(), bgs.end(), [](const fs::BlockGroup& a, const fs::BlockGroup& b) { return a.start > b.start; });
  auto select = [&](bool system, const BalanceFilters& f, u64& count) -> Result<std::vector<u64>> {
    std::vector<u64> out;
    for (const auto& bg : bgs) {
      u64 type = bg.flags & BLOCK_GROUP_TYPE_MASK;
      if (type != (system ? BLOCK_GROUP_SYSTEM : BLOCK_GROUP_METADATA)) continue;
      count++;
      const Chunk* c = fs.chunk_map().find(bg.start);
      if (!c) return make_error(Errc::corrupt, "block group " + std::to_string(bg.start) + " has no chunk");
      if (f.matches(*c, bg.used)) out.push_back(bg.start);
    }
    // Kernel limit filter: fewer matches than limit_min -> none; at most limit_max.
    if (f.limit_min && out.size() < *f.limit_min) out.clear();
    if (f.limit_max && out.size() > *f.limit_max) out.resize(*f.limit_max);
    return out;
  };
  if (opts.metadata) {
    FSCTL_TRY_ASSIGN(auto m, select(false, *opts.metadata, rep.block_groups_metadata));
    rep.selected.insert(rep.selected.end(), m.begin(), m.end());
  }
  if (opts.system) {
    FSCTL_TRY_ASSIGN(auto sy, select(true, *opts.system, rep.block_groups_system));
    rep.selected.insert(rep.selected.end(), sy.begin(), sy.end());
  }
  std::sort(rep.selected.begin(), rep.selected.end(), std::greater<>());
  rep.block_groups_selected = rep.selected.size();

  // Batches: opts.batch groups each, or (batch 0) as many groups as fit
  // the cache budget by their used bytes — the plan of a batch (every
  // block's parent check, children and copy) and the commit's work grow
  // with it; the copies themselves are written back early past half the
  // budget — and at least one.
  std::vector<std::size_t> ends;
  {
    u64 budget = std::max<u64>(fs.cache().budget(), 1);
    std::size_t i = 0;
    while (i < rep.selected.size()) {
      std::size_t j = i;
      u64 bytes = 0;
      while (j < rep.selected.size()) {
        u64 used = fs.block_group_of(rep.selected[j])->used;
        if (opts.batch ? j - i >= opts.batch : (j > i && bytes + used > budget)) break;
        bytes += used;
        ++j;
      }
      ends.push_back(j);
      i = j;
    }
  }
  std::size_t next_begin = 0;
  for (std::size_t end : ends) {
    std::size_t begin = next_begin;
    next_begin = end;
    std::set<u64> targets(rep.selected.begin() + static_cast<std::ptrdiff_t>(begin), rep.selected.begin() + static_cast<std::ptrdiff_t>(end));
    // Groups already empty (e.g. relocated by a run that stopped before
    // removing them) need no relocation transaction.
    bool any_used = false;
    for (u64 s : targets) {
      FSCTL_TRY_ASSIGN(u64 used, committed_block_group_used(fs, s));
      if (used) any_used = true;
    }
    if (any_used) {
      FSCTL_TRY_ASSIGN(auto t, transaction::Transaction::start(fs));
      PhaseTimer timer;
      FSCTL_TRY_ASSIGN(auto plan, RelocationPlan::make(*t, targets));
      timer.mark("plan");
      t->exclude_block_groups(targets);
      steer(*t);
      FSCTL_TRY_ASSIGN(u64 reserved, t->reserve(plan.reservation(fs.nodesize())));
      rep.reserved_bytes += reserved;
      if (opts.dry_run) {
        rep.relocation.relocated_extents += plan.target_blocks();
        rep.relocation.tree_blocks_copied += plan.subvolume_copies();
        rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return rep;
      }
      FSCTL_TRY(plan.apply(*t, rep.relocation));
      timer = PhaseTimer{};
      FSCTL_TRY(t->commit());
      timer.mark("commit");
      rep.commits++;
      rep.tree_blocks_written += t->stats().blocks_written;
      rep.tree_blocks_written_early += t->stats().blocks_written_early;
      rep.used_bytes += t->stats().used_bytes;
    } else if (opts.dry_run) {
      continue;
    }
    for (u64 s : targets) {
      FSCTL_TRY_ASSIGN(u64 used, committed_block_group_used(fs, s));
      if (used != 0)
        return make_error(Errc::corrupt, "block group " + std::to_string(s) + " still has " + std::to_string(used) +
                                             " bytes used after relocating its tree blocks");
    }
    rep.block_groups_relocated += targets.size();
    {
      FSCTL_TRY_ASSIGN(auto t, transaction::Transaction::start(fs));
      t->exclude_block_groups(targets);  // nothing may land in a group about to go
      steer(*t);
      transaction::Reservation r;
      r.items_deleted = targets.size() * 4;
      r.items_updated = targets.size() * 2;
      r.trees_touched = 4;
      FSCTL_TRY_ASSIGN(u64 reserved, t->reserve(r));
      rep.reserved_bytes += reserved;
      for (u64 s : targets) FSCTL_TRY(t->remove_block_group(s));
      FSCTL_TRY(t->commit());
      rep.commits++;
      rep.tree_blocks_written += t->stats().blocks_written;
      rep.tree_blocks_written_early += t->stats().blocks_written_early;
      rep.used_bytes += t->stats().used_bytes;
      rep.block_groups_removed += targets.size();
    }
    if (opts.progress) opts.progress(end, rep.selected.size(), rep.relocation.tree_blocks_copied);
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace fsctl::relocation
