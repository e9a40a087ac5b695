// SPDX-License-Identifier: GPL-2.0-only
// libFuzzer target: the whole open sequence over a fuzzed image. The input is
// a sparse image — le64 size, then records of (le64 physical offset, 4096
// bytes) — served by an in-memory overlay device (zeros elsewhere), so a
// 256 MiB filesystem costs a few KiB per run. Checksums of superblock copies
// and of 4 KiB tree blocks are recomputed so mutations reach the parsers.
// Then FsInfo::open_devices (superblock → chunk map → root tree → block
// groups), every tree's items through ctree::for_each_item and item_to_json,
// and the streaming multi-root walk over all roots. Nothing may crash.
// Seeds: real mkfs.btrfs images in this format (tests/fuzz/seeds/fuzz_open).
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "cmd/item_json.h"
#include "lib/ctree/search.h"
#include "lib/ctree/tree_walk.h"
#include "lib/format/csum.h"
#include "lib/fs/fs_info.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {

constexpr std::size_t REC = 4096;

class SparseDevice final : public io::BlockDevice {
 public:
  SparseDevice(u64 size, std::map<u64, std::vector<u8>> recs) : size_(size), recs_(std::move(recs)) {}
  Status read_at(u64 physical, std::span<u8> buf) override {
    if (physical > size_ || buf.size() > size_ - physical)
      return make_error(Errc::corrupt, name_ + ": read past the end of the device at physical " + std::to_string(physical));
    std::memset(buf.data(), 0, buf.size());
    u64 end = physical + buf.size();
    auto it = recs_.upper_bound(physical >= REC ? physical - REC : 0);
    for (; it != recs_.end() && it->first < end; ++it) {
      u64 s = std::max(it->first, physical), e = std::min<u64>(it->first + REC, end);
      if (s < e) std::memcpy(buf.data() + (s - physical), it->second.data() + (s - it->first), e - s);
    }
    return {};
  }
  Status write_at(u64, std::span<const u8>) override { return make_error(Errc::invalid_argument, "read-only"); }
  Status flush() override { return {}; }
  u64 size() const override { return size_; }
  u32 logical_block_size() const override { return 512; }
  const std::string& path() const override { return name_; }

 private:
  u64 size_;
  std::map<u64, std::vector<u8>> recs_;
  std::string name_ = "fuzz.img";
};

u64 le64_at(const u8* p) {
  u64 v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const u8* data, std::size_t size) {
  if (size < 8) return 0;
  u64 dev_size = le64_at(data) % (1ULL << 40);
  std::map<u64, std::vector<u8>> recs;
  for (std::size_t pos = 8; pos + 8 + REC <= size; pos += 8 + REC) {
    u64 off = le64_at(data + pos) / REC * REC;
    recs[off].assign(data + pos + 8, data + pos + 8 + REC);
  }
  // Fix checksums: superblock copies first (they give csum type and nodesize).
  u16 ct = CSUM_TYPE_CRC32;
  u32 ns = 0;
  for (int m = SUPER_MIRROR_MAX - 1; m >= 0; --m) {
    auto it = recs.find(super_mirror_offset(m));
    if (it == recs.end()) continue;
    SuperBlock sb{};
    std::memcpy(&sb, it->second.data(), sizeof sb);
    if (!csum_type_known(sb.csum_type.get())) continue;
    ct = sb.csum_type.get();
    ns = sb.nodesize.get();
    CsumBytes c = compute_csum(ct, std::span<const u8>(it->second).subspan(CSUM_SIZE_MAX));
    std::memcpy(it->second.data(), c.data(), c.size());
  }
  if (ns == REC) {
    for (auto& [off, rec] : recs) {
      bool is_super = false;
      for (int m = 0; m < SUPER_MIRROR_MAX; ++m) is_super |= off == super_mirror_offset(m);
      if (is_super) continue;
      CsumBytes c = compute_csum(ct, std::span<const u8>(rec).subspan(CSUM_SIZE_MAX));
      std::memcpy(rec.data(), c.data(), c.size());
    }
  }

  std::vector<std::unique_ptr<io::BlockDevice>> devs;
  devs.push_back(std::make_unique<SparseDevice>(dev_size, std::move(recs)));
  fs::OpenOptions opts;
  opts.cache_bytes = 8ULL << 20;
  auto fs = fs::FsInfo::open_devices(std::move(devs), opts);
  if (!fs) return 0;
  fs::FsInfo& f = **fs;

  std::vector<ctree::RootRef> roots{f.tree_root(), f.chunk_root()};
  for (auto& e : f.root_entries()) roots.push_back({e.key.objectid, e.item.bytenr, e.item.level, e.item.generation});
  for (auto& r : roots) {
    (void)ctree::for_each_item(f, r, {}, [&](const NodeView& leaf, u32 slot) -> Result<ctree::Visit> {
      (void)cmd::item_to_json(leaf.item_key(slot), leaf.item_data(slot), f.csum_type()).dump();
      return ctree::Visit::next;
    });
  }
  ctree::RootSets sets;
  (void)ctree::walk_trees(f, roots, sets, [](const cache::TreeBlockRef&, u32) -> Status { return {}; });
  return 0;
}
