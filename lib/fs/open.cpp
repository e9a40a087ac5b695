// SPDX-License-Identifier: GPL-2.0-only
// The open sequence (DESIGN.md "Reading"): superblock → sys_chunk_array →
// chunk tree → root tree → block groups. Mirrors kernel open_ctree order.
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <span>

#include "lib/base/phase_timer.h"
#include "lib/ctree/search.h"
#include "lib/fs/fs_info.h"
#include "lib/fs/write_gate.h"
#include "lib/format/dev_item.h"
#include "lib/format/names.h"

namespace fsctl::fs {
using namespace fsctl::format;

std::string BgTreeState::describe() const {
  if (changing) return has_bg_tree_bit ? "converting-from-bg-tree" : "converting-to-bg-tree";
  return has_bg_tree_bit ? "block-group-tree" : "extent-tree";
}

Result<std::unique_ptr<FsInfo>> FsInfo::open(const std::vector<std::string>& paths, const OpenOptions& opts) {
  Reporter& rep = opts.reporter ? *opts.reporter : null_reporter();
  io::OpenMode mode;
  mode.write = opts.write;
  mode.exclusive = opts.write;
  std::vector<std::unique_ptr<io::BlockDevice>> devs;
  // The same device named twice (two paths to one file or block device)
  // would be opened twice for writing: say so instead of failing on our own
  // exclusive lock (a read-only open finds it from the devids, naming them).
  std::map<std::pair<u64, u64>, std::string> seen;
  for (auto& p : opts.write ? paths : std::vector<std::string>{}) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) continue;  // open_device reports it
    std::pair<u64, u64> id = S_ISBLK(st.st_mode) ? std::pair<u64, u64>{0, st.st_rdev} : std::pair<u64, u64>{st.st_dev, st.st_ino};
    auto [it, fresh] = seen.emplace(id, p);
    if (!fresh)
      return make_error(Errc::invalid_argument, p + ": the same device is given twice (also as " + it->second + "); give each device once");
  }
  for (auto& p : paths) {
    FSCTL_TRY_ASSIGN(auto d, io::open_device(p, mode, rep));
    devs.push_back(std::move(d));
  }
  return open_devices(std::move(devs), opts);
}

void FsInfo::set_cache_budget(u64 cache_bytes) {
  io_budget_ = std::min<u64>(std::clamp<u64>(cache_bytes / 6, 2ULL << 20, 32ULL << 20), cache_bytes / 4);
  cache_ = cache::BlockCache(cache_bytes - io_budget_);
  io_buffers_.set_max_kept(io_budget_);
}

Result<std::unique_ptr<FsInfo>> FsInfo::open_devices(std::vector<std::unique_ptr<io::BlockDevice>> devs,
                                                     const OpenOptions& opts) {
  if (opts.wrap_device)
    for (auto& d : devs) d = opts.wrap_device(std::move(d));
  std::unique_ptr<FsInfo> fs(new FsInfo());
  fs->reporter_ = opts.reporter ? opts.reporter : &null_reporter();
  fs->observer_ = opts.observer ? opts.observer : &null_commit_observer();
  fs->label_ = opts.label;
  fs->writable_ = opts.write;
  fs->set_cache_budget(opts.cache_bytes);
  FSCTL_TRY_ASSIGN(fs->devices_, volumes::DeviceSet::from_devices(std::move(devs), *fs->reporter_));
  fs->super_ = fs->devices_.super();
  const SuperBlock& sb = fs->super_;
  std::string first_path = fs->devices_.devices().begin()->second.path;
  auto ctx = [&](const Error& e) { return make_error(e.context(first_path)); };
  // Before anything else a write command does (a dry run included): a seed
  // device, a btrfs-image restore, unknown bits (write_gate.h).
  if (opts.write)
    if (auto r = check_flags_writable(sb); !r) return ctx(r.error());

  fs->identity_.nodesize = sb.nodesize.get();
  fs->identity_.csum_type = sb.csum_type.get();
  std::memcpy(fs->identity_.fsid.data(), header_fsid(sb).data(), FSID_SIZE);

  if (auto r = fs->load_sys_chunk_array(); !r) return ctx(r.error());
  if (auto r = fs->load_chunk_tree(); !r) return ctx(r.error());
  if (auto r = fs->load_root_tree(); !r) return ctx(r.error());
  if (opts.load_block_groups) {
    PhaseTimer timer(fs->phase_sink());
    if (auto r = fs->load_block_groups(); !r) return ctx(r.error());
    timer.mark("open: load block groups", "(" + std::to_string(fs->block_groups_.size()) + " block groups)");
    fs->block_groups_loaded_ = true;
  }
  return fs;
}

Status FsInfo::load_sys_chunk_array() {
  const SuperBlock& sb = super_;
  auto sys = decode_sys_chunk_array(std::span<const u8>(sb.sys_chunk_array), sb.sys_chunk_array_size.get());
  if (!sys) return make_error(sys.error().context("superblock"));
  for (auto& c : *sys)
    if (auto r = chunk_map_.add(c); !r) return make_error(r.error().context("superblock sys_chunk_array"));
  return {};
}

ctree::RootRef FsInfo::tree_root() const {
  return {ROOT_TREE_OBJECTID, super_.root.get(), super_.root_level, super_.generation.get()};
}
ctree::RootRef FsInfo::chunk_root() const {
  return {CHUNK_TREE_OBJECTID, super_.chunk_root.get(), super_.chunk_root_level, super_.chunk_root_generation.get()};
}

CommitObserver& null_commit_observer() {
  static CommitObserver o;
  return o;
}

void FsInfo::notify_commit(CommitRecord record) {
  record.label = label_;
  observer_->on_commit(record);
}

const BlockGroup* FsInfo::block_group_of(u64 logical) const {
  auto it = std::upper_bound(block_groups_.begin(), block_groups_.end(), logical,
                             [](u64 l, const BlockGroup& b) { return l < b.start; });
  if (it == block_groups_.begin()) return nullptr;
  --it;
  return logical - it->start < it->length ? &*it : nullptr;
}

std::optional<ctree::RootRef> FsInfo::find_root(u64 root_id) const {
  if (root_id == ROOT_TREE_OBJECTID) return tree_root();
  if (root_id == CHUNK_TREE_OBJECTID) return chunk_root();
  const RootEntry* best = nullptr;
  for (auto& e : roots_)
    if (e.key.objectid == root_id) best = &e;
  if (!best) return std::nullopt;
  return ctree::RootRef{root_id, best->item.bytenr, best->item.level, best->item.generation};
}

Status FsInfo::load_chunk_tree() {
  // The chunk tree uuid is learned from the chunk root's own header (kernel
  // read_sys_array/btrfs_read_chunk_tree).
  identity_.check_chunk_tree_uuid = false;
  ctree::ParentCheck rc;
  rc.transid = super_.chunk_root_generation.get();
  rc.level = super_.chunk_root_level;
  auto root = read_tree_block(super_.chunk_root.get(), rc);
  if (!root) return make_error(root.error().context("reading chunk root"));
  std::memcpy(identity_.chunk_tree_uuid.data(), (*root)->view().chunk_tree_uuid().data(), UUID_SIZE);
  identity_.check_chunk_tree_uuid = true;
  cache_.erase((*root)->bytenr);

  auto st = ctree::for_each_item(*this, chunk_root(), {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
    Key k = leaf.item_key(slot);
    if (k.type == KeyType::CHUNK_ITEM) {
      auto c = decode_chunk(k.offset, leaf.item_data(slot));
      if (!c) return make_error(c.error().context("chunk tree leaf " + std::to_string(leaf.bytenr()) + " slot " + std::to_string(slot)));
      FSCTL_TRY(chunk_map_.add(*c));
    } else if (k.type == KeyType::DEV_ITEM) {
      auto di = decode_dev_item(leaf.item_data(slot));
      if (!di) return make_error(di.error().context("chunk tree leaf " + std::to_string(leaf.bytenr()) + " slot " + std::to_string(slot)));
      dev_items_[di->devid] = dev_item_to_disk(*di);
    }
    return ctree::Visit::next;
  });
  if (!st) return make_error(st.error().context("reading chunk tree"));
  for (auto& [devid, di] : dev_items_) {
    const volumes::Device* d = devices_.find(devid);
    if (!d)
      return make_error(Error{Errc::not_found, 0, "missing device devid " + std::to_string(devid) + " uuid " +
                                                     uuid_to_string(di.uuid) + ": give every device of the filesystem"}
                            .about_devid(devid));
    if (std::memcmp(d->uuid.data(), di.uuid, UUID_SIZE) != 0)
      return make_error(Error{Errc::invalid_argument, 0, d->path + ": device uuid " + uuid_to_string(d->uuid) +
                                                             " does not match devid " + std::to_string(devid) + " uuid " +
                                                             uuid_to_string(di.uuid) + " of the chunk tree"}
                            .about_devid(devid));
  }
  for (auto& [devid, d] : devices_.devices())
    if (!dev_items_.count(devid))
      return make_error(Error{Errc::invalid_argument, 0, d.path + ": devid " + std::to_string(devid) +
                                                             " is not part of this filesystem's chunk tree"}
                            .about_devid(devid));
  return {};
}

Status FsInfo::reload_roots() {
  roots_.clear();
  return load_root_tree();
}

Status FsInfo::load_root_tree() {
  auto st = ctree::for_each_item(*this, tree_root(), {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
    Key k = leaf.item_key(slot);
    if (k.type != KeyType::ROOT_ITEM) return ctree::Visit::next;
    auto ri = decode_root_item(leaf.item_data(slot));
    if (!ri) return make_error(ri.error().context("root tree leaf " + std::to_string(leaf.bytenr()) + " slot " + std::to_string(slot)));
    roots_.push_back({k, *ri});
    return ctree::Visit::next;
  });
  if (!st) return make_error(st.error().context("reading root tree"));
  return {};
}

ctree::BlockGroupTrees FsInfo::block_group_trees() const {
  return ctree::BlockGroupTrees{find_root(BLOCK_GROUP_TREE_OBJECTID), find_root(EXTENT_TREE_OBJECTID),
                                static_cast<bool>(super_.flags.get() & SUPER_FLAG_CHANGING_BG_TREE)};
}

Status FsInfo::load_block_groups() {
  bg_state_.has_bg_tree_bit = super_.compat_ro_flags.get() & COMPAT_RO_BLOCK_GROUP_TREE;
  bg_state_.changing = super_.flags.get() & SUPER_FLAG_CHANGING_BG_TREE;
  ctree::BlockGroupTrees trees = block_group_trees();
  bg_state_.bg_tree_exists = trees.block_group_tree.has_value();
  if (!trees.extent_tree) return make_error(Errc::corrupt, "root tree has no extent tree ROOT_ITEM");
  // One exact search per chunk (as the kernel's read_one_block_group path),
  // in the trees ctree::find_block_group_item's rule names. The blocks on
  // those paths are read ahead in batches (one window of chunks at a time, a
  // quarter of the cache budget of leaves at most), so thousands of block
  // group items scattered over as many extent-tree leaves cost a few large
  // reads instead of one small read each.
  std::vector<Key> keys;
  for (auto& [logical, chunk] : chunk_map_.chunks()) keys.push_back(Key{logical, KeyType::BLOCK_GROUP_ITEM, chunk.length});
  const std::size_t window = std::max<std::size_t>(64, cache_.budget() / 4 / std::max<u32>(nodesize(), 1));
  std::size_t done = 0;
  for (auto& [logical, chunk] : chunk_map_.chunks()) {
    if (done % window == 0) {
      auto w = std::span<const Key>(keys).subspan(done, std::min(window, keys.size() - done));
      for (const ctree::RootRef& r : ctree::block_group_item_trees(trees)) ctree::prefetch_search_paths(*this, r, w);
    }
    ++done;
    FSCTL_TRY_ASSIGN(auto found, ctree::find_block_group_item(*this, trees, logical, chunk.length));
    if (!found)
      return make_error(Errc::corrupt, "chunk at logical " + std::to_string(logical) + " length " +
                                           std::to_string(chunk.length) + " has no BLOCK_GROUP_ITEM");
    const BlockGroupRecord& bi = found->item;
    BlockGroup bg{logical, chunk.length, bi.used, bi.flags, bi.chunk_objectid, found->tree};
    if ((bg.flags & (BLOCK_GROUP_TYPE_MASK | BLOCK_GROUP_PROFILE_MASK)) != (chunk.type & (BLOCK_GROUP_TYPE_MASK | BLOCK_GROUP_PROFILE_MASK)))
      reporter_->warning("block group " + std::to_string(logical) + " flags " + block_group_flags_to_string(bg.flags) +
                         " differ from its chunk's " + block_group_flags_to_string(chunk.type));
    if (found->tree == BLOCK_GROUP_TREE_OBJECTID)
      bg_state_.in_bg_tree++;
    else
      bg_state_.in_extent_tree++;
    block_groups_.push_back(bg);
  }
  return {};
}

}  // namespace fsctl::fs
