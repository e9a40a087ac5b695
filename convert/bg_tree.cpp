// SPDX-License-Identifier: GPL-2.0-only
// Block group tree conversion (docs/DESIGN.md; FORMAT.md section 1), a job
// of the batch runner (lib/transaction/batch_runner.h). Its first step marks
// the conversion (CHANGING_BG_TREE; forward, tree 11 and NO_HOLES); each
// later step is one batch: BLOCK_GROUP_ITEMs deleted from the source tree and
// inserted with the same key and bytes into the destination tree, highest
// start first, so the btrfs-progs rule "block groups at or above the last
// converted start are in the new tree" holds after every commit and btrfstune
// can resume what fsctl started (and the other way round). The last batch
// clears the mark (and backwards deletes the emptied block group tree).
#include "convert/bg_tree.h"

#include <algorithm>
#include <chrono>

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/block_group_item.h"
#include "lib/format/node_layout.h"
#include "lib/format/super.h"
#include "lib/transaction/batch_runner.h"
#include "lib/transaction/reservation.h"
#include "lib/transaction/transaction.h"

namespace fsctl::convert {
using namespace fsctl::format;

namespace {

Key bg_key(const fs::BlockGroup& bg) { return Key{bg.start, KeyType::BLOCK_GROUP_ITEM, bg.length}; }

/// Refuses a filesystem whose superblock and trees disagree; sets
/// already_done when there is nothing to do, reverting when a half
/// conversion in the other direction is to be taken back. Errors:
/// Errc::unsupported, Errc::corrupt.
Status check_state(const fs::FsInfo& fs, bool forward, ConvertReport& rep) {
  const fs::BgTreeState& st = fs.bg_tree_state();
  if (forward) {
    if (st.has_bg_tree_bit && !st.changing) {
      rep.already_done = true;
    } else if (st.has_bg_tree_bit && st.changing) {
      rep.reverting = true;  // a half conversion to the extent tree, taken back
    }
  } else {
    if (!st.has_bg_tree_bit && !st.changing) {
      rep.already_done = true;
    } else if (!st.has_bg_tree_bit && st.changing) {
      rep.reverting = true;  // a half conversion to the block group tree, taken back
    }
  }
  // The superblock and the trees must agree before anything is written
  // (a bit without its tree is what the kernel refuses to mount too).
  if (st.has_bg_tree_bit && !st.bg_tree_exists)
    return make_error(Errc::corrupt, "the block_group_tree compat_ro bit is set but tree 11 (the block group tree) does not exist; refusing to convert");
  if (st.has_bg_tree_bit && !st.changing && st.in_extent_tree > 0)
    return make_error(Errc::corrupt, "the block_group_tree compat_ro bit is set but " + std::to_string(st.in_extent_tree) +
                                         " block group items are in the extent tree; refusing to convert");
  if (!st.has_bg_tree_bit && !st.changing && st.in_bg_tree > 0)
    return make_error(Errc::corrupt, std::to_string(st.in_bg_tree) +
                                         " block group items are in tree 11 but neither the block_group_tree bit nor a conversion in progress is recorded; refusing to convert");
  if (!rep.already_done && forward && !(fs.super().compat_ro_flags.get() & COMPAT_RO_FREE_SPACE_TREE_VALID))
    return make_error(Errc::unsupported, "the filesystem has no valid free space tree (space cache v2), which the block group tree needs: "
                                         "mount it once with -o space_cache=v2 (or run btrfstune --convert-to-free-space-tree), then convert");
  return {};
}

/// The conversion as steps: the mark (unless a conversion is in progress),
/// then batches of block groups. Reverting a half conversion of the other
/// direction moves the items it moved back, lowest start first, so that
/// after every commit the moved ones are still the highest starts (the
/// btrfs-progs rule, FORMAT.md section 1): the state stays a half
/// conversion of the other direction with fewer groups moved, which either
/// command (and btrfstune, forward) can go on from. An empty batch list
/// still gets one step: the one that clears the mark (and deletes tree 11
/// when it ends in the extent tree), e.g. after btrfstune's last batch
/// committed before its final transaction.
class ConvertJob final : public transaction::BatchJob {
 public:
  /// `progress`: told of each block group item moved (null: the rehearsal's job).
  ConvertJob(fs::FsInfo& fs, bool forward, bool reverting, ProgressObserver* progress = nullptr)
      : fs_(fs), forward_(forward), reverting_(reverting), progress_(progress) {
    src_tree_ = forward ? EXTENT_TREE_OBJECTID : BLOCK_GROUP_TREE_OBJECTID;
    dst_tree_ = forward ? BLOCK_GROUP_TREE_OBJECTID : EXTENT_TREE_OBJECTID;
    marked_ = fs.bg_tree_state().changing;
    for (auto& bg : fs.block_groups())
      if (bg.item_tree == src_tree_) todo_.push_back(bg);
    std::sort(todo_.begin(), todo_.end(), [reverting](const fs::BlockGroup& a, const fs::BlockGroup& b) {
      return reverting ? a.start < b.start : a.start > b.start;
    });
    final_pending_ = marked_ && todo_.empty();
    u32 ns = fs.nodesize();
    u64 per_leaf = leaf_data_size(ns) / (sizeof(Item) + BLOCK_GROUP_ITEM_SIZE);
    u64 total = fs.block_groups().size();
    new_tree_blocks_ = forward ? (total + per_leaf - 1) / per_leaf + 1 : 0;
  }

  [[nodiscard]] u64 to_move() const { return todo_.size(); }
  [[nodiscard]] u64 moved() const { return next_; }
  /// Block groups already in the destination tree when the run started
  /// (a resumed half conversion), and all of them.
  [[nodiscard]] u64 already_moved() const { return fs_.block_groups().size() - todo_.size(); }
  [[nodiscard]] u64 total() const { return fs_.block_groups().size(); }
  [[nodiscard]] u64 new_tree_blocks() const { return new_tree_blocks_; }
  [[nodiscard]] bool set_no_holes() const { return set_no_holes_; }

  bool done() const override { return marked_ && next_ == todo_.size() && !final_pending_; }
  u64 next_units(u64 batch) const override { return marked_ ? std::min<u64>(batch, todo_.size() - next_) : 0; }
  bool allow_changing_bg_tree() const override { return true; }
  // A batch changes about two leaves per block group (the item's leaf in
  // each tree) plus the new tree: few enough to rehearse on small
  // filesystems; the 7,003-group bench image reserves from bounds.
  std::optional<u64> estimate_blocks(u64 batch) const override {
    return 2 * std::min<u64>(batch, todo_.size()) + new_tree_blocks_ + 16;
  }

  // Bound mode, before the first commit: the destination tree plus the
  // copies of one batch (space freed by a commit is reusable by the next
  // one), plus the growth of a later batch's reservation: its paths in the
  // destination tree grow with that tree's height (a block and two siblings
  // per level; the height the tree has at the end of the run, half-full
  // nodes, one more for the extent tree backwards). Without that margin a
  // filesystem with just enough space for the first batch ran out in a
  // later one, half converted (test 065). A batch whose reservation does
  // not fit is halved until it does. And everything the run will copy must
  // be copyable, found before the first commit sets CHANGING_BG_TREE (a
  // refusal after it would leave a filesystem the kernel does not mount).
  Result<Preflight> preflight(transaction::Transaction& t, u64 batch) override {
    u32 ns = fs_.nodesize();
    u64 height = 1;
    if (forward_) {
      u64 half = std::max<u32>(node_max_ptrs(ns) / 2, 2);
      for (u64 n = new_tree_blocks_; n > 1; n = (n + half - 1) / half) ++height;
    } else if (auto ext = fs_.find_root(EXTENT_TREE_OBJECTID)) {
      height = ext->level + 2u;
    }
    u64 margin = 3 * height;
    Preflight pre{std::max<u64>(batch, 1), 0};
    for (;;) {
      std::size_t first = std::min<std::size_t>(todo_.size(), pre.batch);
      auto got = reserve_batch(t, 0, first, new_tree_blocks_ + margin, !forward_ && first == todo_.size());
      if (got) {
        pre.reserved_bytes = *got;
        break;
      }
      if (got.error().code != Errc::nospc || pre.batch == 1) return make_error(got.error());
      pre.batch = (pre.batch + 1) / 2;
    }
    std::vector<Key> keys;
    for (auto& bg : todo_) keys.push_back(bg_key(bg));
    FSCTL_TRY(t.check_copyable(src_tree_, &keys));
    for (u64 tree : {dst_tree_, ROOT_TREE_OBJECTID, FREE_SPACE_TREE_OBJECTID, QUOTA_TREE_OBJECTID})
      if (tree != EXTENT_TREE_OBJECTID) FSCTL_TRY(t.check_copyable(tree));
    return pre;
  }

  Result<u64> reserve_bound(transaction::Transaction& t, u64 units) override {
    if (!marked_) {
      transaction::Reservation r;
      r.items_inserted = 1;
      r.extra_blocks = 1;
      return t.reserve(r);
    }
    return reserve_batch(t, next_, next_ + units, 0, deletes_bg_tree(units));
  }

  Status apply(transaction::Transaction& t, u64 units) override {
    if (!marked_) {
      // Forward, tree 11 (unless a half conversion left it).
      if (forward_ && !fs_.find_root(BLOCK_GROUP_TREE_OBJECTID)) FSCTL_TRY(t.create_tree(BLOCK_GROUP_TREE_OBJECTID));
      return {};
    }
    return move_batch(t, next_, next_ + units, deletes_bg_tree(units));
  }

  transaction::SuperChanges super_changes(u64 units) const override {
    transaction::SuperChanges c;
    if (!marked_) {
      // The mark, and forward NO_HOLES, which the kernel requires with the
      // block group tree (btrfstune sets it the same way).
      c.flags_set = SUPER_FLAG_CHANGING_BG_TREE;
      if (forward_ && !(fs_.super().incompat_flags.get() & INCOMPAT_NO_HOLES)) c.incompat_set = INCOMPAT_NO_HOLES;
      return c;
    }
    if (next_ + units < todo_.size()) return c;
    c.flags_clear = SUPER_FLAG_CHANGING_BG_TREE;
    if (forward_)
      c.compat_ro_set = COMPAT_RO_BLOCK_GROUP_TREE;
    else
      c.compat_ro_clear = COMPAT_RO_BLOCK_GROUP_TREE;
    return c;
  }

  Status committed(u64 units) override {
    if (!marked_) {
      set_no_holes_ = super_changes(0).incompat_set != 0;
      marked_ = true;
    } else {
      next_ += units;
      final_pending_ = false;
    }
    return {};
  }

  std::string progress_note() const override {
    if (!marked_) return "nothing was written";
    std::string cmd = forward_ ? "fsctl convert --bg-tree" : "fsctl convert --no-bg-tree";
    std::string other = forward_ ? "fsctl convert --no-bg-tree" : "fsctl convert --bg-tree";
    if (reverting_)
      return std::to_string(next_) + " of " + std::to_string(todo_.size()) + " block groups moved back: still half converted " +
             (forward_ ? "back to the extent tree" : "to the block group tree") + "; the kernel will not mount it until `" +
             cmd + " DEVICE...` finishes taking it back (rerunning resumes) or `" + other + " DEVICE...` finishes the conversion";
    return std::to_string(already_moved() + next_) + " of " + std::to_string(total()) + " block groups moved: half converted " +
           (forward_ ? "to the block group tree" : "back to the extent tree") +
           "; the kernel will not mount it until `" + cmd + " DEVICE...` finishes it (rerunning resumes) or `" + other +
           " DEVICE...` takes it back";
  }
  [[nodiscard]] bool started() const { return marked_; }

  /// Block groups done of the whole filesystem (taking back: moved back of
  /// those to move back), counting `in_step` moved by the step in progress.
  ProgressCounts progress_counts() const override { return counts(0); }
  [[nodiscard]] ProgressCounts counts(u64 in_step) const {
    ProgressCounts c;
    c.block_groups_done = (reverting_ ? 0 : already_moved()) + next_ + in_step;
    c.block_groups_total = reverting_ ? to_move() : total();
    return c;
  }

 private:
  // Backwards, the last batch also deletes the emptied block group tree.
  bool deletes_bg_tree(u64 units) const {
    return !forward_ && next_ + units == todo_.size() && fs_.find_root(BLOCK_GROUP_TREE_OBJECTID).has_value();
  }

  // The bound of moving todo[from, to): the batch's deletions from the
  // source tree and insertions into the destination, in the loop's order,
  // replayed on shadows of both trees (transaction::reserve_planned: the
  // leaves a batch changes, not a worst case per item); the leaves are
  // read ahead in batched reads first, which the batch then finds cached.
  Result<u64> reserve_batch(transaction::Transaction& t, std::size_t from, std::size_t to, u64 extra, bool deletes_bg_tree) {
    using Kind = ctree::PlannedChange::Kind;
    transaction::PlannedTree del{src_tree_, {}}, ins{dst_tree_, {}};
    std::vector<Key> ahead;  // sorted ascending below
    for (std::size_t k = from; k < to; ++k) {
      del.changes.push_back({Kind::erase, bg_key(todo_[k]), 0});
      ins.changes.push_back({Kind::insert, bg_key(todo_[k]), BLOCK_GROUP_ITEM_SIZE});
      ahead.push_back(bg_key(todo_[k]));
    }
    std::sort(ahead.begin(), ahead.end());
    for (u64 tree : {src_tree_, dst_tree_})
      if (auto root = t.root(tree)) ctree::prefetch_search_paths(t, (*root)->ref(), ahead);
    transaction::Reservation r;
    r.extra_blocks = extra;
    if (deletes_bg_tree) r.trees_deleted = {BLOCK_GROUP_TREE_OBJECTID};
    return transaction::reserve_planned(t, r, {del, ins});
  }

  // Moves todo[from, to) in `t`: each item deleted from the source tree and
  // inserted with the same key and bytes into the destination, highest
  // start first. The leaves a window of the batch changes in both trees are
  // read ahead in large batched reads (a quarter of the cache budget at a
  // time), not one by one by the searches.
  Status move_batch(transaction::Transaction& t, std::size_t from, std::size_t to, bool deletes_bg_tree) {
    FSCTL_TRY_ASSIGN(auto* src, t.root(src_tree_));
    FSCTL_TRY_ASSIGN(auto* dst, t.root(dst_tree_));
    const std::size_t window = std::max<std::size_t>(64, fs_.cache().budget() / 4 / fs_.nodesize());
    for (std::size_t k = from; k < to; ++k) {
      if ((k - from) % window == 0) {
        std::vector<Key> ahead;
        for (std::size_t x = k; x < std::min(to, k + window); ++x) ahead.push_back(bg_key(todo_[x]));
        std::sort(ahead.begin(), ahead.end());
        ctree::prefetch_search_paths(t, src->ref(), ahead);
        ctree::prefetch_search_paths(t, dst->ref(), ahead);
      }
      Key key = bg_key(todo_[k]);
      ctree::Path p;
      FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *src, key, 0, p));
      if (!exact) return make_error(Errc::corrupt, "block group item " + std::to_string(todo_[k].start) + " vanished from its tree");
      auto d = p.item_data();
      std::vector<u8> item(d.begin(), d.end());
      FSCTL_TRY(ctree::delete_item(t, *src, p));
      FSCTL_TRY(ctree::insert_item(t, *dst, key, item));
      if (progress_) progress_->on_progress(counts(k + 1 - from));
    }
    if (deletes_bg_tree) FSCTL_TRY(t.delete_tree(BLOCK_GROUP_TREE_OBJECTID));
    return {};
  }

  fs::FsInfo& fs_;
  bool forward_;
  bool reverting_ = false;
  bool final_pending_ = false;  // marked, nothing to move, the mark still to clear
  u64 src_tree_ = 0, dst_tree_ = 0;
  std::vector<fs::BlockGroup> todo_;
  std::size_t next_ = 0;
  bool marked_ = false;
  bool set_no_holes_ = false;
  u64 new_tree_blocks_ = 0;
  ProgressObserver* progress_ = nullptr;
};

}  // namespace

Result<ConvertReport> convert_bg_tree(fs::FsInfo& fs, const ConvertOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  ConvertReport rep;
  bool forward = opts.direction == Direction::to_bg_tree;
  rep.state_before = fs.bg_tree_state().describe();
  FSCTL_TRY(check_state(fs, forward, rep));
  rep.block_groups_total = fs.block_groups().size();
  if (rep.already_done) {
    rep.block_groups_done = rep.block_groups_total;
    rep.state_after = rep.state_before;
    return rep;
  }
  const fs::BgTreeState before = fs.bg_tree_state();
  rep.resumed = before.changing && !rep.reverting;
  const bool reverting = rep.reverting;

  ConvertJob job(fs, forward, reverting, opts.progress);
  ConvertJob* real = &job;
  transaction::JobFactory make = [&](fs::FsInfo& f) -> Result<std::unique_ptr<transaction::BatchJob>> {
    return std::unique_ptr<transaction::BatchJob>(std::make_unique<ConvertJob>(f, forward, reverting));
  };
  transaction::RunnerOptions ro;
  ro.batch = std::max<u64>(opts.batch, 1);
  ro.dry_run = opts.dry_run;
  ro.stop = opts.stop;
  ro.progress = opts.progress;
  auto run = transaction::run_batches(fs, job, make, ro);
  if (!run) return make_error(run.error());
  rep.block_groups_to_move = real->to_move();
  rep.block_groups_already_moved = real->already_moved();
  rep.estimated_tree_blocks = real->new_tree_blocks();
  rep.batch = run->batch;
  rep.reserved_bytes = run->reserved_bytes;
  rep.block_groups_done = real->progress_counts().block_groups_done;
  if (opts.dry_run) {
    rep.state_after = rep.state_before;
    return rep;
  }
  rep.block_groups_moved = real->moved();
  rep.commits = run->commits;
  rep.tree_blocks_written = run->tree_blocks_written;
  rep.tree_blocks_written_early = run->tree_blocks_written_early;
  rep.used_bytes = run->used_bytes;
  rep.set_no_holes = real->set_no_holes();
  fs::BgTreeState after = fs.bg_tree_state();
  if (run->interrupted) {
    rep.interrupted = true;
    rep.state_note = real->progress_note();
    after.has_bg_tree_bit = before.has_bg_tree_bit;  // bits change only in the last commit
    after.changing = real->started();
  } else {
    after.has_bg_tree_bit = forward;
    after.changing = false;
  }
  rep.state_after = after.describe();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace fsctl::convert
