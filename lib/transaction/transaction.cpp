// SPDX-License-Identifier: GPL-2.0-only
// Transaction (transaction.h): the handle over its parts. Block allocation
// and freeing, the blocks it changes, bounded writeback (DESIGN.md
// "Writing", invariants 1-5); the commit is in commit.cpp.
#include "lib/transaction/transaction.h"

#include <algorithm>

#include "lib/ctree/search.h"
#include "lib/format/chunk_item.h"
#include "lib/format/names.h"
#include "lib/format/tree_header.h"
#include "lib/fs/write_gate.h"

namespace fsctl::transaction {
using namespace fsctl::format;

Transaction::Transaction(fs::FsInfo& fs) : fs_(fs) { transid_ = fs.super().generation.get() + 1; }

Transaction::~Transaction() {
  fs_.cache().set_outside_bytes(0);
  if (committed_) return;
  // An early writeback still running writes unreferenced space; its error
  // does not outlive this aborted transaction.
  (void)fs_.wait_writeback();
  // Blocks written back early lie in space that is free again: the cache
  // must not serve them should that space be read.
  for (u64 b : written_early_) fs_.cache().erase(b);
  chunks_.restore(fs_);
}

Result<std::unique_ptr<Transaction>> Transaction::start(fs::FsInfo& fs, bool allow_changing_bg_tree) {
  const SuperBlock& sb = fs.super();
  // A read-only FsInfo may start a transaction to plan and reserve (dry
  // runs); its commit fails before writing (FsInfo::write_tree_blocks).
  FSCTL_TRY(fs::check_writable(sb, allow_changing_bg_tree));
  if (fs.block_groups().empty()) return make_error(Errc::invalid_argument, "filesystem opened without block groups");
  // Block group items the kernel's tree checker rejects (check_block_group_item)
  // must not be carried on by a write.
  for (auto& bg : fs.block_groups()) {
    std::string what = "block group " + std::to_string(bg.start) + " (item in " + tree_name(bg.item_tree) + ")";
    if (bg.used > bg.length)
      return make_error(Errc::corrupt, what + ": used " + std::to_string(bg.used) + " exceeds its length " + std::to_string(bg.length));
    if (bg.chunk_objectid != FIRST_CHUNK_TREE_OBJECTID)
      return make_error(Errc::corrupt, what + ": chunk_objectid has " + std::to_string(bg.chunk_objectid) + " expect " +
                                           std::to_string(FIRST_CHUNK_TREE_OBJECTID));
    const Chunk* c = fs.chunk_map().find(bg.start);
    u64 mask = BLOCK_GROUP_TYPE_MASK | BLOCK_GROUP_PROFILE_MASK;
    if (!c || (c->type & mask) != (bg.flags & mask))
      return make_error(Errc::corrupt, what + ": flags " + block_group_flags_to_string(bg.flags) + " differ from its chunk's");
  }
  return std::unique_ptr<Transaction>(new Transaction(fs));
}

Result<ctree::WriteRoot*> Transaction::root(u64 root_id) { return roots_.root(fs_, root_id); }

Result<ctree::WriteRoot*> Transaction::create_tree(u64 root_id) { return roots_.create_tree(*this, root_id); }

Status Transaction::delete_tree(u64 root_id) { return roots_.delete_tree(*this, root_id); }

Result<u64> Transaction::alloc_chunk(u64 flags) { return chunks_.alloc_chunk(*this, flags); }

Status Transaction::remove_block_group(u64 start) { return chunks_.remove_block_group(*this, start); }

Status Transaction::load_space() {
  if (alloc_.loaded()) return {};
  FSCTL_TRY(chunks_.load_dev_extents(*this));
  return alloc_.load(*this, fs_);
}

Result<u64> Transaction::find_free(u64 len, bool system) {
  if (auto s = alloc_.find(len, system, nodesize())) return *s;
  const char* kind = system ? "system" : "metadata";
  if (!chunks_.allocation_allowed())
    return make_error(Errc::nospc, std::string("no free space left in the ") + kind + " block groups (chunk allocation is off)");
  // No chunk is made while a block group tree conversion runs (its items
  // would have to follow the conversion's rule): out of space, as the
  // reservation counts it (allocatable_metadata_bytes is 0 then).
  if (fs_.super().flags.get() & SUPER_FLAG_CHANGING_BG_TREE)
    return make_error(Errc::nospc, std::string("no free space left in the ") + kind +
                                       " block groups (no chunk is allocated during a block group tree conversion)");
  // A new chunk of the profile the filesystem's groups of this kind use
  // (kernel: btrfs_chunk_alloc when a space_info cannot satisfy a
  // reservation). Only memory changes here; its items are inserted at
  // commit, so this is safe in the middle of a tree modification.
  auto logical = alloc_chunk(chunks_.default_flags(fs_, system));
  if (!logical)
    return make_error(logical.error().context(std::string("no free space left in the ") + kind + " block groups; allocating a new chunk"));
  if (auto s = alloc_.find(len, system, nodesize())) return *s;
  return make_error(Errc::nospc, std::string("no free space in the new ") + kind + " chunk at " + std::to_string(*logical));
}

std::shared_ptr<cache::TreeBlock> Transaction::dirty_block(u64 bytenr) {
  auto it = dirty_.find(bytenr);
  return it == dirty_.end() ? nullptr : it->second;
}

std::shared_ptr<cache::TreeBlock> Transaction::dirty_block(const cache::TreeBlockRef& b) {
  if (auto d = dirty_block(b->bytenr)) return d;
  if (!written_early_.erase(b->bytenr)) return nullptr;
  // Its early writeback may still be reading its bytes.
  fs_.join_writeback_of(b->bytenr);
  // Written back early: `b` is that block as read back (from the cache or
  // the disk), the only current copy. Dirty again in place; out of the
  // cache, like every dirty block. Every TreeBlock is created mutable
  // (read_block.cpp, alloc_block_space), so the cast is sound.
  auto d = std::const_pointer_cast<cache::TreeBlock>(b);
  fs_.cache().erase(d->bytenr);
  d->dirty = true;
  dirty_[d->bytenr] = d;
  note_dirty_bytes();
  return d;
}

void Transaction::note_dirty_bytes() {
  // The cache keeps at least half its budget: dirty blocks past that (none
  // could be written back: all held, or a read-only dry run) go over it.
  fs_.cache().set_outside_bytes(std::min<u64>(dirty_.size() * nodesize(), fs_.cache().budget() / 2));
}

void Transaction::sort_by_bytenr(std::vector<std::shared_ptr<cache::TreeBlock>>& blocks) {
  std::sort(blocks.begin(), blocks.end(), [](const auto& a, const auto& b) { return a->bytenr < b->bytenr; });
}

Status Transaction::write_back_early() {
  u64 limit = writeback_threshold_ ? *writeback_threshold_ : fs_.planning_cache_budget() / 2;
  if (!limit || !fs_.writable() || dirty_.size() * nodesize() <= limit) return {};
  // Only blocks nobody else holds (a caller's path, relocation's copies):
  // a held block may be changed through that reference at any time.
  std::vector<std::shared_ptr<cache::TreeBlock>> batch;
  for (auto& [bytenr, blk] : dirty_)
    if (blk.use_count() == 1) batch.push_back(blk);
  if (batch.empty()) return {};
  sort_by_bytenr(batch);
  stats_.blocks_written += batch.size();
  stats_.blocks_written_early += batch.size();
  stats_.writebacks_early++;
  for (auto& blk : batch) {
    written_early_.insert(blk->bytenr);
    dirty_.erase(blk->bytenr);
  }
  note_dirty_bytes();
  // Into the block cache, which evicts by its budget; the device writes go
  // on while the transaction works (FsInfo::start_write_tree_blocks).
  return fs_.start_write_tree_blocks(std::move(batch));
}

Result<cache::TreeBlockRef> Transaction::read_tree_block(u64 bytenr, const ctree::ParentCheck& check) {
  if (auto d = dirty_block(bytenr)) {
    if (auto r = ctree::check_parent(d->view(), check); !r)
      return make_error(r.error().context("tree block " + std::to_string(bytenr) + " (new in this transaction)"));
    return cache::TreeBlockRef(d);
  }
  return fs_.read_tree_block(bytenr, check);
}

Status Transaction::read_tree_blocks(std::vector<ctree::BlockRequest> requests,
                                     const std::function<Status(const cache::TreeBlockRef&)>& visit, bool keep_in_cache) {
  std::vector<ctree::BlockRequest> rest;
  // Blocks of this transaction first, in request order, whether still
  // dirty or written back early: the order must not depend on the writeback.
  for (auto& r : requests) {
    if (is_new(r.bytenr)) {
      FSCTL_TRY_ASSIGN(auto b, read_tree_block(r.bytenr, r.check));
      FSCTL_TRY(visit(b));
    } else {
      rest.push_back(r);
    }
  }
  return fs_.read_tree_blocks(std::move(rest), visit, keep_in_cache);
}

Result<std::shared_ptr<cache::TreeBlock>> Transaction::alloc_block_space(u64 owner, u8 level) {
  if (stop_ && stop_->now()) return make_error(Errc::aborted, "interrupted");
  FSCTL_TRY(load_space());
  FSCTL_TRY(write_back_early());
  u32 ns = nodesize();
  // The chunk tree lives in SYSTEM chunks only (the kernel allocates its
  // blocks with the SYSTEM profile, get_alloc_profile_by_root), which
  // sys_chunk_array maps before the chunk tree is read.
  FSCTL_TRY_ASSIGN(u64 bytenr, find_free(ns, owner == CHUNK_TREE_OBJECTID));
  auto b = std::make_shared<cache::TreeBlock>();
  b->bytenr = bytenr;
  b->data.assign(ns, 0);
  b->dirty = true;
  // The header of a new, empty block (kernel btrfs_init_new_buffer); the
  // checksum is computed at write-back.
  const auto& id = fs_.identity();
  TreeBlockHeader h;
  h.fsid = id.fsid;
  h.chunk_tree_uuid = id.chunk_tree_uuid;
  h.bytenr = bytenr;
  h.flags = NEW_BLOCK_HEADER_FLAGS;
  h.generation = transid_;
  h.owner = owner;
  h.nritems = 0;
  h.level = level;
  store_header(b->data, h);
  dirty_[bytenr] = b;
  fs_.cache().erase(bytenr);
  note_dirty_bytes();
  fst_.allocated(bytenr);
  usage_.allocated(alloc_.group_of(bytenr)->start, ns);
  bytes_used_delta_ += ns;
  stats_.blocks_allocated++;
  stats_.used_bytes += ns;
  return b;
}

Result<std::shared_ptr<cache::TreeBlock>> Transaction::alloc_tree_block(u64 owner, u8 level) {
  FSCTL_TRY_ASSIGN(auto b, alloc_block_space(owner, level));
  refs_.add(b->bytenr, {owner, level});
  return b;
}

Status Transaction::release_block_space(u64 bytenr) {
  u32 ns = nodesize();
  FSCTL_TRY(load_space());
  BlockGroupSpace* s = alloc_.group_of(bytenr);
  if (!s) return make_error(Errc::corrupt, "freeing tree block " + std::to_string(bytenr) + " outside every metadata block group");
  if (is_new(bytenr))
    return make_error(Errc::invalid_argument, "tree block " + std::to_string(bytenr) + " is new in this transaction");
  fst_.freed_committed(bytenr);
  alloc_.pin(bytenr);
  usage_.freed(s->start, ns);
  bytes_used_delta_ -= ns;
  stats_.blocks_freed++;
  return {};
}

Status Transaction::release_data_space(u64 bytenr, u64 len) {
  const fs::BlockGroup* bg = fs_.block_group_of(bytenr);
  if (!bg || !(bg->flags & format::BLOCK_GROUP_DATA) || len == 0 || bytenr + len > bg->start + bg->length)
    return make_error(Errc::corrupt, "freeing data extent " + std::to_string(bytenr) + " of " + std::to_string(len) +
                                         " bytes outside every data block group");
  fst_.freed_data(bytenr, len);
  usage_.freed(bg->start, len);
  bytes_used_delta_ -= static_cast<s64>(len);
  return {};
}

Status Transaction::free_tree_block(u64 bytenr, u64 owner, u8 level) {
  u32 ns = nodesize();
  FSCTL_TRY(load_space());
  BlockGroupSpace* s = alloc_.group_of(bytenr);
  if (!s) return make_error(Errc::corrupt, "freeing tree block " + std::to_string(bytenr) + " outside every metadata block group");
  if (!is_new(bytenr)) {
    FSCTL_TRY(check_droppable(bytenr, owner, level));
    refs_.drop(bytenr, {owner, level});
    return release_block_space(bytenr);
  }
  // Allocated by this transaction: it never reached the disk, so its space
  // is reusable at once; undo what was recorded for it. (One written back
  // early reached unreferenced space only.)
  dirty_.erase(bytenr);
  note_dirty_bytes();
  if (written_early_.erase(bytenr)) fs_.cache().erase(bytenr);
  refs_.forget_new(bytenr, {owner, level});  // its extent item may exist now
  fst_.freed_new(bytenr);
  alloc_.give_back(bytenr, ns);
  usage_.freed(s->start, ns);
  bytes_used_delta_ -= ns;
  stats_.blocks_freed++;
  return {};
}

}  // namespace fsctl::transaction
