// SPDX-License-Identifier: GPL-2.0-only
// Tree drop (tree_drop.h): a recursive top-down walk over the committed
// tree, dropping references through extent_ref_edit.
#include "lib/transaction/tree_drop.h"

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/extent_item.h"
#include "lib/format/file_extent.h"
#include "lib/format/root_item.h"
#include "lib/transaction/extent_ref_edit.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

DropStats& DropStats::operator+=(const DropStats& o) {
  tree_blocks_freed += o.tree_blocks_freed;
  shared_blocks_left += o.shared_blocks_left;
  data_refs_dropped += o.data_refs_dropped;
  data_extents_freed += o.data_extents_freed;
  data_bytes_freed += o.data_bytes_freed;
  blocks_to_full_backref += o.blocks_to_full_backref;
  return *this;
}

namespace {

class Walker {
 public:
  /// `update_ref`: shared blocks this tree made are switched to full
  /// backrefs before its reference goes (subvolumes; kernel
  /// btrfs_drop_snapshot(update_ref=1)); `root_offset`: its ROOT_ITEM key
  /// offset (a snapshot's creation transid; blocks of that generation or
  /// older were there before).
  Walker(Transaction& t, u64 root_id, u64 budget, DropStats& st, bool update_ref, u64 root_offset)
      : t_(t), root_id_(root_id), budget_(budget), st_(st), update_ref_(update_ref), root_offset_(root_offset) {}

  /// Resumes at `progress` (drop_level `level`) instead of the start.
  void resume_at(const Key& progress, u8 level) {
    resuming_ = true;
    restarted_ = true;
    progress_ = progress;
    progress_level_ = level;
  }

  /// Drops the tree below (and including) its root node `root`: whether it
  /// finished; else stop() says where it stopped.
  Result<bool> run(const cache::TreeBlockRef& root) {
    const u8 level = root->view().level();
    FSCTL_TRY_ASSIGN(ExtentInfo info, tree_block_info(t_, root->bytenr, level));
    FSCTL_TRY_ASSIGN(ExtentRef ref, ref_to_root(*root, info.flags));
    if (info.refs > 1 && !resuming_) {
      // Another tree holds the root node itself: only this tree's reference goes.
      FSCTL_TRY(drop_shared(root->bytenr, level, ref));
      return true;
    }
    if (info.refs > 1) {
      FSCTL_TRY(shared_on_path(root->bytenr));
    }
    if (level == 0) {
      FSCTL_TRY(drop_leaf_data_refs(*root, info.flags));
    } else {
      FSCTL_TRY(walk_node(root, info.flags, resuming_));
      if (stopped_) return false;
    }
    FSCTL_TRY(free_own(root->bytenr, level, ref));
    return true;
  }

  [[nodiscard]] const Key& stop_key() const { return stop_key_; }
  [[nodiscard]] u8 stop_level() const { return stop_level_; }
  [[nodiscard]] u64 units() const { return units_; }

 private:
  static Status shared_on_path(u64 bytenr) {
    return make_error(Errc::corrupt, "tree block " + std::to_string(bytenr) +
                                         " on the recorded drop progress path is shared (refs > 1): the drop progress does not match the tree");
  }

  /// This tree's reference to its root node: the node's own bytenr when its
  /// item has FULL_BACKREF (relocation trees), else the root's TREE_BLOCK_REF
  /// (kernel walk_up_proc for eb == root->node).
  Result<ExtentRef> ref_to_root(const cache::TreeBlock& b, u64 flags) const {
    if (flags & BLOCK_FLAG_FULL_BACKREF) return ExtentRef{KeyType::SHARED_BLOCK_REF, 0, b.bytenr};
    if (b.view().owner() != root_id_) return make_error(owner_mismatch(b));
    return ExtentRef{KeyType::TREE_BLOCK_REF, root_id_};
  }
  /// The reference node `parent` (extent flags `pflags`) holds on each child
  /// (kernel do_walk_down / walk_up_proc): SHARED_BLOCK_REF of the parent
  /// with FULL_BACKREF, else this root's TREE_BLOCK_REF, which needs the
  /// parent to be the root's own.
  Result<ExtentRef> ref_to_children(const cache::TreeBlock& parent, u64 pflags) const {
    if (pflags & BLOCK_FLAG_FULL_BACKREF) return ExtentRef{KeyType::SHARED_BLOCK_REF, 0, parent.bytenr};
    if (parent.view().owner() != root_id_) return make_error(owner_mismatch(parent));
    return ExtentRef{KeyType::TREE_BLOCK_REF, root_id_};
  }
  Error owner_mismatch(const cache::TreeBlock& b) const {
    Error e;
    e.code = Errc::corrupt;
    e.message = "tree block " + std::to_string(b.bytenr) + " of tree " + std::to_string(root_id_) + " has owner " +
                std::to_string(b.view().owner()) + " and no FULL_BACKREF flag";
    e.bytenr = b.bytenr;
    return e;
  }

  /// Whether the step's budget is spent (at least one unit done).
  [[nodiscard]] bool budget_spent() const { return units_ > 0 && units_ >= budget_; }

  /// Processes the children of node `nb` (extent flags `flags`) in order,
  /// from the resume point when `on_path`.
  Status walk_node(const cache::TreeBlockRef& nb, u64 flags, bool on_path) {
    const NodeView v = nb->view();
    const u8 level = v.level();
    FSCTL_TRY_ASSIGN(ExtentRef ref, ref_to_children(*nb, flags));
    u32 slot = 0;
    bool descend_resume = false;
    if (on_path) {
      bool exact = false;
      u32 at = ctree::bin_search(v, progress_, exact);
      // The pointer recorded (at drop_level: everything left of it is
      // dropped, it is not), or the child the progress lies in (above it:
      // partly dropped). Not found exactly: the one before, as the kernel's
      // search does.
      slot = exact ? at : (at == 0 ? 0 : at - 1);
      descend_resume = level != progress_level_;
    }
    for (; slot < v.nritems(); ++slot) {
      if (budget_spent()) {
        stopped_ = true;
        stop_key_ = v.node_key(slot);
        stop_level_ = level;
        return {};
      }
      FSCTL_TRY(child(nb, slot, ref, descend_resume));
      descend_resume = false;
      if (stopped_) return {};
    }
    return {};
  }

  /// One child pointer of node `nb`; `ref` is the node's reference on it.
  Status child(const cache::TreeBlockRef& nb, u32 slot, const ExtentRef& ref, bool on_path) {
    const NodeView v = nb->view();
    const u64 bytenr = v.blockptr(slot);
    const u8 level = static_cast<u8>(v.level() - 1);
    FSCTL_TRY_ASSIGN(ExtentInfo info, tree_block_info(t_, bytenr, level));
    if (info.refs > 1) {
      if (on_path) return shared_on_path(bytenr);
      // The kernel's UPDATE_BACKREF stage (do_walk_down): a shared block
      // this tree made after it was created (a snapshot of it took it
      // since) is referenced through this root's keyed refs, which are
      // about to go; its subtree is switched to full backrefs first.
      const bool leaf_full = level == 0 && (info.flags & BLOCK_FLAG_FULL_BACKREF);
      if (update_ref_ && !leaf_full && v.ptr_generation(slot) > root_offset_) {
        FSCTL_TRY_ASSIGN(auto cb, t_.read_tree_block(bytenr, ctree::child_check(v, slot)));
        FSCTL_TRY(to_full_backref(cb, info.flags));
        return drop_ref(bytenr, level, ref);
      }
      return drop_shared(bytenr, level, ref);
    }
    FSCTL_TRY_ASSIGN(auto cb, t_.read_tree_block(bytenr, ctree::child_check(v, slot)));
    if (level == 0) {
      FSCTL_TRY(drop_leaf_data_refs(*cb, info.flags));
    } else {
      FSCTL_TRY(walk_node(cb, info.flags, on_path));
      if (stopped_) return {};
    }
    return free_own(bytenr, level, ref);
  }

  /// Drops this tree's reference `ref` on the shared block `bytenr`; after
  /// a resume the first such reference may already be gone (the kernel's
  /// restarted check), then nothing is dropped.
  Status drop_shared(u64 bytenr, u8 level, const ExtentRef& ref) {
    ExtentTarget e{bytenr, true, level, 0};
    if (restarted_) {
      FSCTL_TRY_ASSIGN(bool exists, extent_ref_exists(t_, e, ref));
      if (!exists) {
        ++units_;
        return {};
      }
      restarted_ = false;
    }
    return drop_ref(bytenr, level, ref);
  }

  /// Drops this tree's reference `ref` on block `bytenr` (shared: it stays).
  Status drop_ref(u64 bytenr, u8 level, const ExtentRef& ref) {
    FSCTL_TRY_ASSIGN(RefDropped d, drop_extent_ref(t_, ExtentTarget{bytenr, true, level, 0}, ref));
    if (d.freed) {
      st_.tree_blocks_freed++;
    } else {
      st_.shared_blocks_left++;
    }
    ++units_;
    return {};
  }

  /// Frees block `bytenr`, this tree's alone, by dropping its one reference.
  Status free_own(u64 bytenr, u8 level, const ExtentRef& ref) {
    FSCTL_TRY_ASSIGN(RefDropped d, drop_extent_ref(t_, ExtentTarget{bytenr, true, level, 0}, ref));
    if (!d.freed)
      return make_error(Errc::corrupt, "tree block " + std::to_string(bytenr) + " had refs 1 and still has " + std::to_string(d.refs_left) +
                                           " after its reference from tree " + std::to_string(root_id_) + " went");
    st_.tree_blocks_freed++;
    ++units_;
    return {};
  }

  /// The kernel's UPDATE_BACKREF walk below a shared block (walk_down_proc,
  /// do_walk_down in that stage): block `b` (extent flags `flags`) without
  /// FULL_BACKREF gets it, its children (or a leaf's data extents) gaining a
  /// full backref to it before losing the keyed ref of its owner
  /// (btrfs_inc_ref(full_backref=1), btrfs_dec_ref(full_backref=0)); then
  /// each child made after this root was created, except leaves that have
  /// FULL_BACKREF already, the same way.
  Status to_full_backref(const cache::TreeBlockRef& b, u64 flags) {
    const NodeView v = b->view();
    const u8 level = v.level();
    if (!(flags & BLOCK_FLAG_FULL_BACKREF)) {
      const u64 owner = v.owner();
      if (level == 0) {
        FSCTL_TRY_ASSIGN(auto refs, leaf_data_refs(*b, false));
        for (auto& [e, keyed] : refs) FSCTL_TRY(add_extent_ref(t_, e, ExtentRef{KeyType::SHARED_DATA_REF, 0, b->bytenr}));
        for (auto& [e, keyed] : refs) FSCTL_TRY(drop_extent_ref(t_, e, keyed));
      } else {
        for (u32 slot = 0; slot < v.nritems(); ++slot)
          FSCTL_TRY(add_extent_ref(t_, ExtentTarget{v.blockptr(slot), true, static_cast<u8>(level - 1), 0},
                                   ExtentRef{KeyType::SHARED_BLOCK_REF, 0, b->bytenr}));
        for (u32 slot = 0; slot < v.nritems(); ++slot)
          FSCTL_TRY(drop_extent_ref(t_, ExtentTarget{v.blockptr(slot), true, static_cast<u8>(level - 1), 0},
                                    ExtentRef{KeyType::TREE_BLOCK_REF, owner}));
      }
      FSCTL_TRY(set_extent_flags(t_, ExtentTarget{b->bytenr, true, level, 0}, BLOCK_FLAG_FULL_BACKREF));
      st_.blocks_to_full_backref++;
      ++units_;
    }
    if (level == 0) return {};
    for (u32 slot = 0; slot < v.nritems(); ++slot) {
      if (v.ptr_generation(slot) <= root_offset_) continue;
      const u8 cl = static_cast<u8>(level - 1);
      FSCTL_TRY_ASSIGN(ExtentInfo info, tree_block_info(t_, v.blockptr(slot), cl));
      if (cl == 0 && (info.flags & BLOCK_FLAG_FULL_BACKREF)) continue;
      FSCTL_TRY_ASSIGN(auto cb, t_.read_tree_block(v.blockptr(slot), ctree::child_check(v, slot)));
      FSCTL_TRY(to_full_backref(cb, info.flags));
    }
    return {};
  }

  /// The data extent and the reference of each file extent of `leaf`
  /// (kernel __btrfs_mod_ref): the leaf itself (`full`), else the leaf's
  /// owner, inode and file offset minus the extent offset.
  Result<std::vector<std::pair<ExtentTarget, ExtentRef>>> leaf_data_refs(const cache::TreeBlock& leaf, bool full) const {
    std::vector<std::pair<ExtentTarget, ExtentRef>> out;
    const NodeView v = leaf.view();
    for (u32 slot = 0; slot < v.nritems(); ++slot) {
      Key k = v.item_key(slot);
      if (k.type != KeyType::EXTENT_DATA) continue;
      FSCTL_TRY_ASSIGN(FileExtent fe, with_context(decode_file_extent(v.item_data(slot)),
                                                    "leaf " + std::to_string(leaf.bytenr) + " item " + key_to_string(k)));
      if (!fe.has_data_extent()) continue;
      ExtentRef ref = full ? ExtentRef{KeyType::SHARED_DATA_REF, 0, leaf.bytenr}
                           : ExtentRef{KeyType::EXTENT_DATA_REF, v.owner(), 0, k.objectid, k.offset - fe.offset};
      out.emplace_back(ExtentTarget{fe.disk_bytenr, false, 0, fe.disk_num_bytes}, ref);
    }
    return out;
  }

  /// Drops the data reference of every file extent of leaf `leaf` (kernel
  /// btrfs_dec_ref: the leaf's owner and the file offset minus the extent
  /// offset, or the leaf itself with FULL_BACKREF).
  Status drop_leaf_data_refs(const cache::TreeBlock& leaf, u64 flags) {
    FSCTL_TRY_ASSIGN(auto refs, leaf_data_refs(leaf, flags & BLOCK_FLAG_FULL_BACKREF));
    for (auto& [e, ref] : refs) {
      FSCTL_TRY_ASSIGN(RefDropped d, drop_extent_ref(t_, e, ref));
      st_.data_refs_dropped++;
      if (d.freed) {
        st_.data_extents_freed++;
        st_.data_bytes_freed += e.num_bytes;
      }
    }
    return {};
  }


  Transaction& t_;
  u64 root_id_;
  u64 budget_;
  DropStats& st_;
  bool update_ref_;
  u64 root_offset_;
  u64 units_ = 0;
  bool resuming_ = false, restarted_ = false, stopped_ = false;
  Key progress_{};
  u8 progress_level_ = 0;
  Key stop_key_{};
  u8 stop_level_ = 0;
};

Status set_root_item_progress(Transaction& t, const Key& root_key, const Key& progress, u8 level) {
  FSCTL_TRY_ASSIGN(auto* rt, t.root(ROOT_TREE_OBJECTID));
  ctree::Path p;
  FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot_for_write(t, *rt, root_key, 0, p));
  if (!exact) return make_error(Errc::corrupt, "ROOT_ITEM " + key_to_string(root_key) + " vanished");
  auto d = ctree::item_data_mut(t, p);
  FSCTL_TRY_ASSIGN(RootInfo ri, with_context(decode_root_item(d), "ROOT_ITEM " + key_to_string(root_key)));
  ri.drop_progress = progress;
  ri.drop_level = level;
  ri.refs = 0;  // being dropped (a relocation tree's merge progress ends here)
  return with_context(store_root_item(d, ri), "ROOT_ITEM " + key_to_string(root_key));
}

Status delete_if_present(Transaction& t, const Key& key) {
  FSCTL_TRY_ASSIGN(auto* rt, t.root(ROOT_TREE_OBJECTID));
  FSCTL_TRY_ASSIGN(auto found, ctree::lookup_item(t, rt->ref(), key));
  if (!found) return {};
  ctree::Path p;
  FSCTL_TRY(ctree::search_slot_for_write(t, *rt, key, 0, p));
  return ctree::delete_item(t, *rt, p);
}

}  // namespace

Result<DropStep> drop_tree_step(Transaction& t, const Key& root_key, u64 units, DropStats& stats) {
  FSCTL_TRY_ASSIGN(auto* rt, t.root(ROOT_TREE_OBJECTID));
  FSCTL_TRY_ASSIGN(auto item, ctree::lookup_item(t, rt->ref(), root_key));
  if (!item) return make_error(Errc::not_found, "no ROOT_ITEM " + key_to_string(root_key));
  FSCTL_TRY_ASSIGN(RootInfo ri, with_context(decode_root_item(*item), "ROOT_ITEM " + key_to_string(root_key)));
  ctree::ParentCheck check;
  check.owner = std::nullopt;
  check.transid = ri.generation;
  check.level = ri.level;
  FSCTL_TRY_ASSIGN(auto root, t.read_tree_block(ri.bytenr, check));
  DropStats st;
  // Subvolume trees with mixed backrefs get the update (kernel
  // btrfs_clean_one_deleted_snapshot); relocation trees do not (kernel
  // merge_reloc_roots / clean_dirty_subvols: update_ref 0).
  const u64 backref_rev = root->view().flags() >> BACKREF_REV_SHIFT;
  const bool update_ref = is_fstree(root_key.objectid) && backref_rev >= MIXED_BACKREF_REV;
  Walker w(t, root_key.objectid, std::max<u64>(units, 1), st, update_ref, root_key.offset);
  // The kernel's test: a drop_progress with objectid 0 is a drop not
  // started. A relocation tree with refs > 0 is not being dropped: its
  // drop_progress is how far the kernel merged it into its subvolume
  // (relocation.c merge_reloc_root), and its drop starts at the beginning
  // (the merge swaps subtrees between two whole trees: the relocation tree
  // stays a whole tree).
  const bool merge_progress = !is_fstree(root_key.objectid) && ri.refs != 0;
  if (ri.drop_progress.objectid != 0 && !merge_progress) w.resume_at(ri.drop_progress, ri.drop_level);
  FSCTL_TRY_ASSIGN(bool finished, w.run(root));
  stats += st;
  DropStep step;
  step.units = w.units();
  if (!finished) {
    step.drop_progress = w.stop_key();
    step.drop_level = w.stop_level();
    FSCTL_TRY(set_root_item_progress(t, root_key, step.drop_progress, step.drop_level));
    return step;
  }
  step.finished = true;
  FSCTL_TRY(delete_if_present(t, root_key));
  FSCTL_TRY(delete_if_present(t, Key{ORPHAN_OBJECTID, KeyType::ORPHAN_ITEM, root_key.objectid}));
  return step;
}

}  // namespace fsctl::transaction
