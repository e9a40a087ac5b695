// SPDX-License-Identifier: GPL-2.0-only
// Block group tree conversion (docs/DESIGN.md; FORMAT.md section 1). Each
// batch is one transaction: delete BLOCK_GROUP_ITEMs from the source tree,
// insert the same key and bytes into the destination tree, highest start
// first, so the btrfs-progs rule "block groups at or above the last converted
// start are in the new tree" holds after every commit and btrfstune can resume
// what fsctl started (and the other way round).
#include "convert/bg_tree.h"

#include <algorithm>
#include <chrono>

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/items.h"
#include "lib/format/super.h"
#include "lib/transaction/reservation.h"
#include "lib/transaction/transaction.h"

namespace fsctl::convert {
using namespace fsctl::format;

Result<ConvertReport> convert_bg_tree(fs::FsInfo& fs, const ConvertOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  ConvertReport rep;
  const fs::BgTreeState& st = fs.bg_tree_state();
  rep.state_before = st.describe();
  bool forward = opts.direction == Direction::to_bg_tree;
  u64 src_tree = forward ? EXTENT_TREE_OBJECTID : BLOCK_GROUP_TREE_OBJECTID;
  u64 dst_tree = forward ? BLOCK_GROUP_TREE_OBJECTID : EXTENT_TREE_OBJECTID;

  if (forward) {
    if (st.has_bg_tree_bit && !st.changing) {
      rep.already_done = true;
    } else if (st.has_bg_tree_bit && st.changing) {
      return make_error(Errc::unsupported, "a conversion from the block group tree is in progress; finish it first with fsctl convert --no-bg-tree");
    }
  } else {
    if (!st.has_bg_tree_bit && !st.changing) {
      rep.already_done = true;
    } else if (!st.has_bg_tree_bit && st.changing) {
      return make_error(Errc::unsupported, "a conversion to the block group tree is in progress; finish it first with fsctl convert --bg-tree");
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
  rep.block_groups_total = fs.block_groups().size();
  if (rep.already_done) {
    rep.state_after = rep.state_before;
    return rep;
  }
  rep.resumed = st.changing;
  u64 cro = fs.super().compat_ro_flags.get();
  if (forward && !(cro & COMPAT_RO_FREE_SPACE_TREE_VALID))
    return make_error(Errc::unsupported, "the filesystem has no valid free space tree (space cache v2), which the block group tree needs: "
                                         "mount it once with -o space_cache=v2 (or run btrfstune --convert-to-free-space-tree), then convert");

  std::vector<fs::BlockGroup> todo;
  for (auto& bg : fs.block_groups())
    if (bg.item_tree == src_tree) todo.push_back(bg);
  std::sort(todo.begin(), todo.end(), [](const fs::BlockGroup& a, const fs::BlockGroup& b) { return a.start > b.start; });
  u64 total = todo.size();
  rep.block_groups_to_move = total;
  u64 batch = std::max<u64>(opts.batch, 1);
  u32 ns = fs.nodesize();
  u64 per_leaf = (leaf_data_size(ns)) / (sizeof(Item) + sizeof(BlockGroupItem));
  u64 new_tree_blocks = forward ? (rep.block_groups_total + per_leaf - 1) / per_leaf + 1 : 0;
  rep.estimated_tree_blocks = new_tree_blocks;

  // The reservation of moving todo[from, to): the batch's deletions from
  // the source tree and insertions into the destination, in the loop's
  // order, replayed on shadows of both trees (transaction::reserve_planned:
  // the leaves a batch changes, not a worst case per item); the leaves are
  // read ahead in batched reads first, which the batch then finds cached.
  auto reserve_batch = [&](transaction::Transaction& t, std::size_t from, std::size_t to, u64 extra,
                           bool deletes_bg_tree) -> Result<u64> {
    using Kind = ctree::PlannedChange::Kind;
    transaction::PlannedTree del{src_tree, {}}, ins{dst_tree, {}};
    std::vector<Key> ahead;  // ascending: todo is sorted highest first
    for (std::size_t k = from; k < to; ++k) {
      Key key{todo[k].start, KeyType::BLOCK_GROUP_ITEM, todo[k].length};
      del.changes.push_back({Kind::erase, key, 0});
      ins.changes.push_back({Kind::insert, key, static_cast<u32>(sizeof(BlockGroupItem))});
      ahead.push_back(key);
    }
    std::reverse(ahead.begin(), ahead.end());
    for (u64 tree : {src_tree, dst_tree})
      if (auto root = t.root(tree)) ctree::prefetch_search_paths(t, (*root)->ref(), ahead);
    transaction::Reservation r;
    r.extra_blocks = extra;
    if (deletes_bg_tree) r.trees_deleted = {BLOCK_GROUP_TREE_OBJECTID};
    return transaction::reserve_planned(t, r, {del, ins});
  };

  // Moves todo[from, to) in `t`: each item deleted from the source tree and
  // inserted with the same key and bytes into the destination, highest
  // start first; the last batch backwards also deletes the emptied block
  // group tree. Run once as a rehearsal for small batches (the reservation)
  // and once for real.
  auto move_batch = [&](transaction::Transaction& t, std::size_t from, std::size_t to, bool deletes_bg_tree) -> Status {
    FSCTL_TRY_ASSIGN(auto* src, t.root(src_tree));
    FSCTL_TRY_ASSIGN(auto* dst, t.root(dst_tree));
    // The leaves a window of this batch changes in both trees are read ahead
    // in large batched reads (a quarter of the cache budget at a time), not
    // one by one by the searches below.
    const std::size_t window = std::max<std::size_t>(64, fs.cache().budget() / 4 / ns);
    for (std::size_t k = from; k < to; ++k) {
      if ((k - from) % window == 0) {
        std::vector<Key> ahead;  // ascending: todo is sorted highest first
        for (std::size_t x = std::min(to, k + window); x-- > k;)
          ahead.push_back(Key{todo[x].start, KeyType::BLOCK_GROUP_ITEM, todo[x].length});
        ctree::prefetch_search_paths(t, src->ref(), ahead);
        ctree::prefetch_search_paths(t, dst->ref(), ahead);
      }
      Key key{todo[k].start, KeyType::BLOCK_GROUP_ITEM, todo[k].length};
      ctree::Path p;
      FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *src, key, 0, p));
      if (!exact)
        return make_error(Errc::corrupt, "block group item " + std::to_string(todo[k].start) + " vanished from its tree");
      auto d = p.item_data();
      std::vector<u8> item(d.begin(), d.end());
      FSCTL_TRY(ctree::delete_item(t, *src, p));
      FSCTL_TRY(ctree::insert_item(t, *dst, key, item));
    }
    if (deletes_bg_tree) FSCTL_TRY(t.delete_tree(BLOCK_GROUP_TREE_OBJECTID));
    return {};
  };
  // The first transaction's change besides the flags: forward, tree 11.
  auto mark_changes = [&](transaction::Transaction& t) -> Status {
    if (forward && !fs.find_root(BLOCK_GROUP_TREE_OBJECTID)) FSCTL_TRY(t.create_tree(BLOCK_GROUP_TREE_OBJECTID));
    return {};
  };

  // Reservation for the whole run, before the first write: the destination
  // tree plus the copies of one batch (space freed by a commit is reusable by
  // the next one), plus the growth of a later batch's reservation: its
  // paths in the destination tree grow with that tree's height (a block and
  // two siblings per level; the height the tree has at the end of the run,
  // half-full nodes, one more for the extent tree backwards). Without that
  // margin a filesystem with just enough space for the first batch ran out
  // in a later one, half converted (test 065, "full": 121 of 131 groups).
  // A batch whose reservation does not fit is halved until it does (down
  // to one block group; a reservation writes nothing): on a filesystem with
  // little metadata space left the run commits more often instead of
  // failing (the manybg fixture: 106 groups need 9.9 MB at once, 4.8 MB
  // were free; test 065).
  {
    FSCTL_TRY_ASSIGN(auto probe, transaction::Transaction::start(fs, true));
    u64 height = 1;
    if (forward) {
      u64 half = std::max<u32>(node_max_ptrs(ns) / 2, 2);
      for (u64 n = new_tree_blocks; n > 1; n = (n + half - 1) / half) ++height;
    } else if (auto ext = fs.find_root(EXTENT_TREE_OBJECTID)) {
      height = ext->level + 2u;
    }
    u64 margin = 3 * height;
    u64 whole = 0;
    for (;;) {
      std::size_t first = std::min<std::size_t>(todo.size(), batch);
      bool whole_run = first == todo.size();
      auto got = reserve_batch(*probe, 0, first, new_tree_blocks + margin, !forward && whole_run);
      if (got ? *got <= transaction::REHEARSAL_MAX_BLOCKS * ns : got.error().code == Errc::nospc) {
        // A small run is reserved by rehearsal, every batch of it, each
        // from the state now (with the first commit's change when this
        // run makes it): the batches differ (items spread over more or
        // fewer leaves), and the largest must fit, with the growth margin
        // (test 065: reserving for the first batch only, a run ran out
        // in a later one). Should a rehearsal not complete, the bound
        // above stands.
        u64 worst = 0;
        bool rehearsed = true;
        for (std::size_t from = 0; from < todo.size() && rehearsed; from += batch) {
          std::size_t to = std::min<std::size_t>(todo.size(), from + batch);
          auto m = transaction::rehearse(fs, true, [&](transaction::Transaction& rt) -> Status {
            if (!st.changing) FSCTL_TRY(mark_changes(rt));
            // Backwards, the last batch deletes the emptied block group
            // tree; rehearsed from now, with the other batches' items still
            // in it, it cannot: that deletion's few copies are in the margin.
            return move_batch(rt, from, to, !forward && from == 0 && to == todo.size());
          });
          // Any error but running out of space (or past the cache budget)
          // is one a later batch would meet after the first commit, half
          // converted: refuse now, nothing written (an attack finding: a
          // corrupt extent leaf only the last batch reaches).
          if (!m && m.error().code != Errc::nospc) return make_error(m.error());
          if (m)
            worst = std::max(worst, *m);
          else
            rehearsed = false;
        }
        if (rehearsed) got = probe->reserve_rehearsed(worst + (whole_run ? 0 : (new_tree_blocks + margin) * ns));
      }
      if (got) {
        whole = *got;
        break;
      }
      if (got.error().code != Errc::nospc || batch == 1) return make_error(got.error());
      batch = (batch + 1) / 2;
    }
    rep.batch = batch;
    if (opts.dry_run) rep.reserved_bytes = whole;
    // Everything the run will copy must be copyable, found before the first
    // commit sets CHANGING_BG_TREE (a refusal after it would leave a
    // filesystem the kernel does not mount).
    std::vector<Key> keys;
    for (auto& bg : todo) keys.push_back({bg.start, KeyType::BLOCK_GROUP_ITEM, bg.length});
    FSCTL_TRY(probe->check_copyable(src_tree, &keys));
    for (u64 tree : {dst_tree, ROOT_TREE_OBJECTID, FREE_SPACE_TREE_OBJECTID, QUOTA_TREE_OBJECTID})
      if (tree != EXTENT_TREE_OBJECTID) FSCTL_TRY(probe->check_copyable(tree));
  }
  if (opts.dry_run) {
    rep.block_groups_moved = 0;
    rep.state_after = rep.state_before;
    return rep;
  }

  auto finish_flags = [&](bool last) {
    transaction::SuperChanges c;
    if (!last) return c;
    c.flags_clear = SUPER_FLAG_CHANGING_BG_TREE;
    if (forward)
      c.compat_ro_set = COMPAT_RO_BLOCK_GROUP_TREE;
    else
      c.compat_ro_clear = COMPAT_RO_BLOCK_GROUP_TREE;
    return c;
  };

  // First transaction of a fresh run: mark the conversion (and, forward,
  // create tree 11 and set NO_HOLES, which the kernel requires with the
  // block group tree — btrfstune sets it the same way).
  if (!st.changing) {
    FSCTL_TRY_ASSIGN(auto t, transaction::Transaction::start(fs, true));
    transaction::Reservation r;
    r.items_inserted = 1;
    r.extra_blocks = 1;
    FSCTL_TRY_ASSIGN(u64 reserved, transaction::reserve_by_rehearsal(*t, t->reserve(r), true, mark_changes));
    rep.reserved_bytes += reserved;
    u64 incompat_set = 0;
    FSCTL_TRY(mark_changes(*t));
    if (forward) {
      if (!(fs.super().incompat_flags.get() & INCOMPAT_NO_HOLES)) {
        incompat_set = INCOMPAT_NO_HOLES;
        rep.set_no_holes = true;
      }
    }
    transaction::SuperChanges mark;
    mark.flags_set = SUPER_FLAG_CHANGING_BG_TREE;
    mark.incompat_set = incompat_set;
    FSCTL_TRY(t->commit(mark));
    rep.commits++;
    rep.tree_blocks_written += t->stats().blocks_written;
    rep.tree_blocks_written_early += t->stats().blocks_written_early;
    rep.used_bytes += t->stats().used_bytes;
  }

  std::size_t i = 0;
  do {
    std::size_t end = 0;
    bool last = false;
    std::unique_ptr<transaction::Transaction> t;
    for (;;) {
      end = std::min<std::size_t>(todo.size(), i + batch);
      last = end == todo.size();
      FSCTL_TRY_ASSIGN(t, transaction::Transaction::start(fs, true));
      auto reserved = transaction::reserve_by_rehearsal(*t, reserve_batch(*t, i, end, 0, last && !forward), true,
                                                        [&](transaction::Transaction& rt) { return move_batch(rt, i, end, last && !forward); });
      if (reserved) {
        rep.reserved_bytes += *reserved;
        break;
      }
      if (reserved.error().code == Errc::nospc && batch > 1) {
        batch = (batch + 1) / 2;
        rep.batch = batch;
        continue;
      }
      // After the first commit: the filesystem is a resumable half-converted one.
      return make_error(reserved.error().context(std::to_string(rep.block_groups_moved) + " of " + std::to_string(total) +
                                                 " block groups moved in " + std::to_string(rep.commits) +
                                                 " commits; the conversion is resumable"));
    }
    FSCTL_TRY(move_batch(*t, i, end, last && !forward));
    FSCTL_TRY(t->commit(finish_flags(last)));
    rep.commits++;
    rep.tree_blocks_written += t->stats().blocks_written;
    rep.tree_blocks_written_early += t->stats().blocks_written_early;
    rep.used_bytes += t->stats().used_bytes;
    rep.block_groups_moved += end - i;
    if (opts.progress) opts.progress(rep.block_groups_moved, total);
    i = end;
  } while (i < todo.size());

  fs::BgTreeState after = st;
  after.has_bg_tree_bit = forward;
  after.changing = false;
  rep.state_after = after.describe();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace fsctl::convert
