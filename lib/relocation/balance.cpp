// SPDX-License-Identifier: GPL-2.0-only
// Balance driver (balance.h): refusals, block group selection in the kernel's
// order (highest logical start first, kernel __btrfs_balance), batches.
#include "lib/relocation/balance.h"

#include <algorithm>
#include <functional>
#include <chrono>
#include <map>

#include "lib/base/phase_timer.h"
#include "lib/ctree/search.h"
#include "lib/format/balance_item.h"
#include "lib/format/items.h"
#include "lib/format/names.h"
#include "lib/fs/leftover_work.h"
#include "lib/io/overlay_device.h"
#include "lib/transaction/batch_runner.h"
#include "lib/transaction/transaction.h"
#include "lib/volumes/raid_profiles.h"

namespace fsctl::relocation {
using namespace fsctl::format;

namespace {

Status refuse_unfinished_work(fs::FsInfo& fs) {
  // Relocating beside the kernel's own unfinished relocation (or beside a
  // subvolume the cleaner is dropping) would change blocks its resumed work
  // expects to find where it left them.
  FSCTL_TRY_ASSIGN(auto work, fs::find_leftover_work(fs));
  if (work.balance_flags)
    return make_error(Errc::unsupported, "a kernel balance of " + balance_types_to_string(*work.balance_flags) +
                                             " block groups is paused or was interrupted (BALANCE_ITEM in the root tree): "
                                             "mount the filesystem and let it finish (btrfs balance resume) or cancel it "
                                             "(fsctl balance cancel, or mount -o skip_balance and btrfs balance cancel), then run fsctl balance");
  if (!work.relocation_trees.empty())
    return make_error(Errc::unsupported, fs::describe_leftover_work({std::nullopt, work.relocation_trees, {}}).front() +
                                             "; drop them offline (fsctl balance cancel) or mount the filesystem once so the kernel merges them, "
                                             "then run fsctl balance");
  if (!work.dropping.empty())
    return make_error(Errc::unsupported, "subvolume " + std::to_string(work.dropping.front().root_id) +
                                             " is being deleted (ROOT_ITEM refs 0): finish the drop offline (fsctl rescue finish-drop) "
                                             "or mount the filesystem and wait for `btrfs subvolume sync`, then run fsctl balance");
  for (const auto& bg : fs.block_groups())
    if ((bg.flags & BLOCK_GROUP_DATA) && (bg.flags & BLOCK_GROUP_METADATA))
      return make_error(Errc::unsupported, "block group " + std::to_string(bg.start) +
                                               " mixes data and metadata (mixed-bg filesystem): metadata cannot be balanced alone, "
                                               "as with the kernel balance data and metadata together (fsctl balances metadata only)");
  return {};
}



/// The balance as steps of the batch runner: per batch of selected block
/// groups, a relocation transaction (skipped when every group of the batch
/// is already empty: a run that stopped before removing them), then one that
/// removes the emptied groups. A dry run has only the first relocation,
/// planned and reserved.
class BalanceJob final : public transaction::BatchJob {
 public:
  BalanceJob(fs::FsInfo& fs, BalanceReport& rep, std::vector<std::size_t> ends,
             const std::function<void(transaction::Transaction&)>& steer, const BalanceOptions& opts)
      : fs_(fs), rep_(rep), ends_(std::move(ends)), steer_(steer), opts_(opts) {
    for (u64 s : rep_.selected) {
      u64 blocks = fs_.block_group_of(s)->used / fs_.nodesize();
      open_blocks_[s] = blocks;
      rep_.tree_blocks_total += blocks;
    }
    start_batch();
  }

  bool done() const override { return batch_ >= ends_.size(); }
  u64 next_units(u64) const override { return targets_.size(); }
  bool may_halve() const override { return false; }
  std::optional<u64> estimate_blocks(u64) const override { return std::nullopt; }

  void prepare(transaction::Transaction& t) override {
    t.exclude_block_groups(targets_);  // nothing may land in a group being emptied or removed
    steer_(t);
  }

  Result<u64> reserve_bound(transaction::Transaction& t, u64) override {
    if (relocating_) {
      FSCTL_TRY(check_system_space(t));
      PhaseTimer timer(fs_.phase_sink());
      FSCTL_TRY_ASSIGN(plan_, RelocationPlan::make(t, targets_));
      timer.mark("plan");
      // The batch's groups as they are now, not at open (earlier batches'
      // copies may have landed in them).
      rep_.tree_blocks_total = rep_.tree_blocks_total - batch_estimate() + plan_->target_blocks();
      if (opts_.dry_run) {
        rep_.relocation.relocated_extents += plan_->target_blocks();
        rep_.relocation.tree_blocks_copied += plan_->subvolume_copies();
      }
      return t.reserve(plan_->reservation(fs_.nodesize()));
    }
    transaction::Reservation r;
    r.items_deleted = targets_.size() * 4;
    r.items_updated = targets_.size() * 2;
    r.trees_touched = 4;
    return t.reserve(r);
  }

  Status apply(transaction::Transaction& t, u64) override {
    if (relocating_)
      return plan_->apply(t, rep_.relocation, [this](u64 blocks) {
        in_step_ += blocks;
        if (opts_.progress) opts_.progress->on_progress(progress_counts());
      });
    for (u64 s : targets_) FSCTL_TRY(t.remove_block_group(s));
    return {};
  }

  Status committed(u64) override {
    if (relocating_) {
      plan_.reset();
      relocating_ = false;
      rep_.tree_blocks_done += in_step_;
      in_step_ = 0;
      return check_emptied();
    }
    rep_.block_groups_removed += targets_.size();
    ++batch_;
    start_batch();
    return {};
  }

  // A relocation that does not fit: a batch of several groups is split into
  // one group per step; a lone group is left where it is.
  bool skip_step(const Error& e) override {
    if (!relocating_) {
      // Removing the emptied groups does not fit (it rewrites chunk tree
      // items: the system space is full and no SYSTEM chunk fits): they stay,
      // empty, for a later run to remove.
      for (u64 s : targets_) {
        const auto* bg = fs_.block_group_of(s);
        rep_.not_relocated.push_back({s, bg ? bg->flags : 0, "empty, but not removed: " + e.message});
      }
      ++batch_;
      start_batch();
      return true;
    }
    // Back to the estimate at open for these groups (reserve_bound counted
    // the plan's blocks instead).
    if (plan_) rep_.tree_blocks_total = rep_.tree_blocks_total - plan_->target_blocks() + batch_estimate();
    std::size_t begin = batch_ ? ends_[batch_ - 1] : 0;
    if (ends_[batch_] - begin > 1) {
      std::vector<std::size_t> singles;
      for (std::size_t i = begin + 1; i <= ends_[batch_]; ++i) singles.push_back(i);
      ends_.erase(ends_.begin() + static_cast<std::ptrdiff_t>(batch_));
      ends_.insert(ends_.begin() + static_cast<std::ptrdiff_t>(batch_), singles.begin(), singles.end());
    } else {
      u64 start = *targets_.begin();
      const auto* bg = fs_.block_group_of(start);
      rep_.not_relocated.push_back({start, bg ? bg->flags : 0, e.message});
      rep_.tree_blocks_total -= batch_estimate();  // never moved
      ++batch_;
    }
    plan_.reset();
    start_batch();
    return true;
  }

  /// Tree blocks relocated (the step in progress included) of those in
  /// the selected groups, and their bytes; groups relocated and removed.
  ProgressCounts progress_counts() const override {
    ProgressCounts c;
    c.tree_blocks_done = rep_.tree_blocks_done + in_step_;
    c.tree_blocks_total = rep_.tree_blocks_total;
    c.bytes_done = c.tree_blocks_done * fs_.nodesize();
    c.bytes_total = c.tree_blocks_total * fs_.nodesize();
    c.block_groups_done = rep_.block_groups_removed;
    c.block_groups_total = rep_.selected.size();
    return c;
  }

  std::string progress_note() const override {
    return std::to_string(rep_.block_groups_removed) + " of " + std::to_string(rep_.selected.size()) +
           " selected block groups relocated and removed; the filesystem is consistent and mounts; run the same "
           "`fsctl balance` again to go on";
  }

 private:
  // The targets of batch_, and whether they need a relocation step. The dry
  // run stops at the first batch that does.
  void start_batch() {
    for (; batch_ < ends_.size(); ++batch_) {
      std::size_t begin = batch_ ? ends_[batch_ - 1] : 0;
      targets_ = std::set<u64>(rep_.selected.begin() + static_cast<std::ptrdiff_t>(begin),
                               rep_.selected.begin() + static_cast<std::ptrdiff_t>(ends_[batch_]));
      relocating_ = false;
      for (u64 s : targets_) {
        auto used = committed_block_group_used(fs_, s);
        if (!used || *used) relocating_ = true;  // an error surfaces in the plan
      }
      if (!relocating_) rep_.tree_blocks_total -= batch_estimate();  // emptied by an earlier run
      if (!opts_.dry_run) {
        if (!relocating_) (void)check_emptied();
        return;
      }
      if (relocating_) return;
    }
  }

  // The chunk tree blocks of system targets move to other system groups or
  // a new SYSTEM chunk: Transaction::reserve counts metadata space only.
  Status check_system_space(transaction::Transaction& t) const {
    u64 used = 0;
    for (u64 s : targets_)
      if (const auto* bg = fs_.block_group_of(s); bg && (bg->flags & BLOCK_GROUP_SYSTEM)) used += bg->used;
    if (!used) return {};
    u64 need = used + 8ULL * fs_.nodesize();  // and a copied path of the chunk tree
    FSCTL_TRY_ASSIGN(u64 have, t.system_bytes_available(need));
    if (have >= need) return {};
    return make_error(Errc::nospc, "not enough system space: relocating system block group tree blocks needs " +
                                       std::to_string(need) + " bytes, " + std::to_string(have) +
                                       " free in other system block groups and no SYSTEM chunk fits (nothing was written)");
  }

  // The tree blocks of batch_'s groups at open (their used over nodesize).
  u64 batch_estimate() const {
    u64 n = 0;
    for (u64 s : targets_) n += open_blocks_.at(s);
    return n;
  }

  // Every target of the batch is empty now (relocated or found empty).
  Status check_emptied() {
    for (u64 s : targets_) {
      FSCTL_TRY_ASSIGN(u64 used, committed_block_group_used(fs_, s));
      if (used != 0)
        return make_error(Errc::corrupt, "block group " + std::to_string(s) + " still has " + std::to_string(used) +
                                             " bytes used after relocating its tree blocks");
    }
    rep_.block_groups_relocated += targets_.size();
    return {};
  }

  fs::FsInfo& fs_;
  BalanceReport& rep_;
  std::vector<std::size_t> ends_;
  const std::function<void(transaction::Transaction&)>& steer_;
  const BalanceOptions& opts_;
  std::size_t batch_ = 0;
  std::set<u64> targets_;
  bool relocating_ = false;
  std::optional<RelocationPlan> plan_;
  std::map<u64, u64> open_blocks_;  // selected group start -> its tree blocks at open
  u64 in_step_ = 0;  // tree blocks moved by the relocation in progress (not committed yet)
};

// convert=PROFILE: the profile must be one the devices can hold (kernel
// btrfs_balance: "unable to start balance with target ... profile"), and
// RAID5/6 are not written by fsctl.
Status check_convert_profiles(fs::FsInfo& fs, const BalanceOptions& opts) {
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
  return {};
}

// With convert, every transaction allocates only from block groups of the
// target profile and makes new chunks with it.
std::function<void(transaction::Transaction&)> profile_steering(fs::FsInfo& fs, const BalanceOptions& opts) {
  return [&fs, &opts](transaction::Transaction& t) {
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
}

// The block groups of one kind (system or metadata) that the kind's filters
// select (kernel should_balance_chunk, limit counted per kind), from the
// highest start down (`bgs` sorted so); `count` counts the kind's groups.
Result<std::vector<u64>> select_kind(fs::FsInfo& fs, const std::vector<fs::BlockGroup>& bgs, bool system, const BalanceFilters& f,
                                     u64& count) {
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
}

// Selection per kind (kernel should_balance_chunk with the kind's
// filters, limit counted per kind), then all of them processed from the
// highest start down, as the kernel walks the chunk tree.
Status select_block_groups(fs::FsInfo& fs, const BalanceOptions& opts, BalanceReport& rep) {
  std::vector<fs::BlockGroup> bgs(fs.block_groups().begin(), fs.block_groups().end());
  std::sort(bgs.begin(), bgs.end(), [](const fs::BlockGroup& a, const fs::BlockGroup& b) { return a.start > b.start; });
  if (opts.metadata) {
    FSCTL_TRY_ASSIGN(auto m, select_kind(fs, bgs, false, *opts.metadata, rep.block_groups_metadata));
    rep.selected.insert(rep.selected.end(), m.begin(), m.end());
  }
  if (opts.system) {
    FSCTL_TRY_ASSIGN(auto sy, select_kind(fs, bgs, true, *opts.system, rep.block_groups_system));
    rep.selected.insert(rep.selected.end(), sy.begin(), sy.end());
  }
  std::sort(rep.selected.begin(), rep.selected.end(), std::greater<>());
  rep.block_groups_selected = rep.selected.size();
  return {};
}

// Batches: opts.batch groups each, or (batch 0) as many groups as fit
// the cache budget by their used bytes — the plan of a batch (every
// block's parent check, children and copy) and the commit's work grow
// with it; the copies themselves are written back early past half the
// budget — and at least one. Returns each batch's end in `selected`.
std::vector<std::size_t> batch_ends(fs::FsInfo& fs, const BalanceOptions& opts, const std::vector<u64>& selected) {
  std::vector<std::size_t> ends;
  u64 budget = std::max<u64>(fs.planning_cache_budget(), 1);
  std::size_t i = 0;
  while (i < selected.size()) {
    std::size_t j = i;
    u64 bytes = 0;
    while (j < selected.size()) {
      u64 used = fs.block_group_of(selected[j])->used;
      if (opts.batch ? j - i >= opts.batch : (j > i && bytes + used > budget)) break;
      bytes += used;
      ++j;
    }
    ends.push_back(j);
    i = j;
  }
  return ends;
}


// The dry run as the real run on an in-memory copy of the filesystem
// (FsInfo::rehearsal_copy; the engine is deterministic, so the copy's run is
// the real one): nullopt when the copy's writes outgrow `memory` bytes.
Result<std::optional<BalanceReport>> simulate_whole_run(fs::FsInfo& fs, const BalanceOptions& opts, u64 memory) {
  FSCTL_TRY_ASSIGN(fs::RehearsalCopy copy, fs.rehearsal_copy(memory));
  BalanceOptions real = opts;
  real.dry_run = false;
  real.progress = nullptr;
  auto r = balance_metadata(*copy.fs, real);
  if (copy.outgrown()) return std::optional<BalanceReport>{};
  if (!r) return make_error(r.error().code, r.error().message + " (in a dry run of the whole balance on an in-memory copy; nothing was written)");
  r->dry_run = true;
  r->whole_run_simulated = true;
  return std::optional<BalanceReport>{std::move(*r)};
}

}  // namespace

Result<BalanceReport> balance_metadata(fs::FsInfo& fs, const BalanceOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  BalanceReport rep;
  rep.dry_run = opts.dry_run;
  FSCTL_TRY(refuse_unfinished_work(fs));
  FSCTL_TRY(check_convert_profiles(fs, opts));
  if (opts.dry_run && !fs.is_rehearsal_copy()) {
    FSCTL_TRY_ASSIGN(auto whole, simulate_whole_run(fs, opts, 40ULL << 20));
    if (whole) {
      whole->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return std::move(*whole);
    }
  }
  std::function<void(transaction::Transaction&)> steer = profile_steering(fs, opts);
  FSCTL_TRY(select_block_groups(fs, opts, rep));
  BalanceJob job(fs, rep, batch_ends(fs, opts, rep.selected), steer, opts);
  transaction::JobFactory make;  // no rehearsal: see below
  transaction::RunnerOptions ro;
  ro.dry_run = opts.dry_run;
  ro.rehearse = false;  // a balance reserves from its plan (its bound), as before the runner
  ro.stop = opts.stop;
  ro.progress = opts.progress;
  FSCTL_TRY_ASSIGN(auto run, transaction::run_batches(fs, job, make, ro));
  rep.commits += run.commits;
  rep.tree_blocks_written += run.tree_blocks_written;
  rep.tree_blocks_written_early += run.tree_blocks_written_early;
  rep.reserved_bytes += run.reserved_bytes;
  rep.used_bytes += run.used_bytes;
  rep.chunks_created.insert(rep.chunks_created.end(), run.chunks_created.begin(), run.chunks_created.end());
  if (run.interrupted) {
    rep.interrupted = true;
    rep.state_note = job.progress_note();
  }
  // Exit 6 only when nothing could be done: no commit at all.
  if (!rep.not_relocated.empty() && run.commits == 0 && !opts.dry_run)
    return make_error(Errc::nospc, "not enough metadata space to relocate or remove any of the " + std::to_string(rep.selected.size()) +
                                       " selected block groups (" + rep.not_relocated.front().reason + "); nothing was written");
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace fsctl::relocation
