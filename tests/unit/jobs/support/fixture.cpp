// SPDX-License-Identifier: GPL-2.0-only
// Unpacking the zstd fixtures into sparse memory images, and opening them.
#include "tests/unit/jobs/support/fixture.h"

#include "lib/base/assert.h"
#include "lib/ctree/write.h"
#include "lib/format/balance_item.h"
#include "lib/format/items.h"
#include "lib/transaction/transaction.h"

#include <doctest/doctest.h>
#include <zstd.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <vector>

namespace fsctl::testing {

namespace {
Result<std::shared_ptr<const io::MemoryImage>> unpack(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return make_error(Errc::io, path + ": cannot open (made by tests/data/make-unit-images.sh)");
  std::vector<char> packed((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  unsigned long long size = ZSTD_getFrameContentSize(packed.data(), packed.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
    return make_error(Errc::corrupt, path + ": not a zstd frame that records its content size");
  auto image = std::make_shared<io::MemoryImage>(size);
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> ds(ZSTD_createDStream(), ZSTD_freeDStream);
  std::vector<u8> out(1 << 20);
  ZSTD_inBuffer in{packed.data(), packed.size(), 0};
  u64 at = 0;
  while (in.pos < in.size) {
    ZSTD_outBuffer ob{out.data(), out.size(), 0};
    std::size_t r = ZSTD_decompressStream(ds.get(), &ob, &in);
    if (ZSTD_isError(r)) return make_error(Errc::corrupt, path + ": " + ZSTD_getErrorName(r));
    if (at + ob.pos > size) return make_error(Errc::corrupt, path + ": more bytes than the frame's content size");
    // Zero pages stay unallocated: a 256 MiB image costs its used pages.
    FSCTL_TRY(image->write(at, std::span<const u8>(out.data(), ob.pos)));
    at += ob.pos;
    if (r == 0 && in.pos == in.size) break;
  }
  if (at != size) return make_error(Errc::corrupt, path + ": truncated, " + std::to_string(at) + " of " + std::to_string(size) + " bytes");
  return std::shared_ptr<const io::MemoryImage>(std::move(image));
}
}  // namespace

Result<std::shared_ptr<const io::MemoryImage>> load_fixture(const std::string& name) {
  static std::map<std::string, std::shared_ptr<const io::MemoryImage>> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  FSCTL_TRY_ASSIGN(auto image, unpack(std::string(FSCTL_TEST_DATA_DIR) + "/" + name + ".img.zst"));
  cache[name] = image;
  return image;
}

std::shared_ptr<const io::MemoryImage> fixture(const std::string& name) {
  auto f = load_fixture(name);
  REQUIRE_MESSAGE(f.has_value(), (f ? "" : f.error().message));
  return *f;
}

Result<std::unique_ptr<fs::FsInfo>> open_memory_fs(std::shared_ptr<io::MemoryImage> image, bool write, io::DeviceWrapper wrap,
                                                   fs::CommitObserver* observer, u64 cache_bytes) {
  fs::OpenOptions o;
  o.write = write;
  o.load_block_groups = true;
  o.cache_bytes = cache_bytes;
  o.wrap_device = std::move(wrap);
  o.observer = observer;
  o.label = "crash test";
  std::vector<std::unique_ptr<io::BlockDevice>> devs;
  devs.push_back(io::make_memory_device(std::move(image), "memory"));
  return fs::FsInfo::open_devices(std::move(devs), o);
}

namespace {

// A copy of `base` with one transaction committed on it: `r` reserved, then
// `edit` applied.
std::shared_ptr<io::MemoryImage> committed_edit(const std::shared_ptr<const io::MemoryImage>& base, const transaction::Reservation& r,
                                                const std::function<void(transaction::Transaction&)>& edit) {
  auto image = std::make_shared<io::MemoryImage>(*base);
  auto fs = open_memory_fs(image, true);
  FSCTL_ASSERT(fs.has_value());
  auto t = transaction::Transaction::start(**fs);
  FSCTL_ASSERT(t.has_value());
  FSCTL_ASSERT((*t)->reserve(r).has_value());
  edit(**t);
  FSCTL_ASSERT((*t)->commit().has_value());
  return image;
}

}  // namespace

std::shared_ptr<io::MemoryImage> with_wrong_qgroups(const std::shared_ptr<const io::MemoryImage>& base) {
  // Damage two qgroups' numbers: 0/256 (sv1) referenced and exclusive + 1 MiB,
  // 1/100 referenced + 4 KiB, committed by the transaction engine as a
  // corrupting bit flip would leave them.
  transaction::Reservation r;
  r.items_updated = 2;
  return committed_edit(base, r, [](transaction::Transaction& t) {
    auto q = t.root(format::QUOTA_TREE_OBJECTID);
    FSCTL_ASSERT(q.has_value());
    for (auto [qgroupid, rfer, excl] : {std::tuple<u64, u64, u64>{256, 1 << 20, 1 << 20}, {(1ULL << 48) | 100, 4096, 0}}) {
      ctree::Path p;
      auto found = ctree::search_slot_for_write(t, **q, format::Key{0, format::KeyType::QGROUP_INFO, qgroupid}, 0, p);
      FSCTL_ASSERT(found.has_value());
      FSCTL_ASSERT(*found);
      auto d = ctree::item_data_mut(t, p);
      FSCTL_ASSERT(d.size() >= sizeof(format::QgroupInfoItem));
      format::store_le<u64>(d.data() + offsetof(format::QgroupInfoItem, rfer),
                            format::load_le<u64>(d.data() + offsetof(format::QgroupInfoItem, rfer)) + rfer);
      format::store_le<u64>(d.data() + offsetof(format::QgroupInfoItem, excl),
                            format::load_le<u64>(d.data() + offsetof(format::QgroupInfoItem, excl)) + excl);
    }
  });
}

std::shared_ptr<io::MemoryImage> with_balance_item(const std::shared_ptr<const io::MemoryImage>& base) {
  transaction::Reservation r;
  r.items_inserted = 1;
  return committed_edit(base, r, [](transaction::Transaction& t) {
    auto rt = t.root(format::ROOT_TREE_OBJECTID);
    FSCTL_ASSERT(rt.has_value());
    std::vector<u8> item(format::BALANCE_ITEM_SIZE, 0);
    item[0] = static_cast<u8>(format::BALANCE_FLAG_METADATA);
    FSCTL_ASSERT(ctree::insert_item(t, **rt, format::Key{format::BALANCE_OBJECTID, format::KeyType::TEMPORARY_ITEM, 0}, item)
                     .has_value());
  });
}

}  // namespace fsctl::testing
