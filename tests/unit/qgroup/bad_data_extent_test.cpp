// SPDX-License-Identifier: GPL-2.0-only
// qgroup verification of a leaf whose file extent item has a disk_num_bytes
// no valid item has (the kernel's tree-checker refuses it: not aligned to
// the sectorsize): an Errc::corrupt error naming the data extent, the value,
// the leaf and its slot, never a count.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/file_extent.h"
#include "lib/format/items.h"
#include "lib/format/le.h"
#include "lib/qgroup/qgroup.h"
#include "lib/transaction/transaction.h"
#include "tests/unit/jobs/support/fixture.h"

using namespace fsctl;

TEST_CASE("qgroup verification refuses a file extent item with a disk_num_bytes off the 4 KiB grid") {
  auto image = std::make_shared<io::MemoryImage>(*testing::fixture("quota-4k"));
  // The first regular data extent of sv2, the newest subvolume (its leaves
  // are its own: the engine copies no shared block).
  std::optional<format::Key> key;
  u64 disk_bytenr = 0;
  u64 sv2 = 0;
  {
    auto fs = testing::open_memory_fs(image, false);
    REQUIRE(fs.has_value());
    for (auto& s : qgroup::subvolume_roots(**fs)) sv2 = std::max(sv2, s.root_id);
    REQUIRE(sv2 > 256);
    auto root = (*fs)->find_root(sv2);
    REQUIRE(root.has_value());
    REQUIRE(ctree::for_each_item(**fs, *root, {}, [&](const format::NodeView& v, u32 slot) -> Result<ctree::Visit> {
      if (v.item_type_at(slot) != format::KeyType::EXTENT_DATA) return ctree::Visit::next;
      auto fe = format::decode_file_extent(v.item_data(slot));
      if (!fe || !fe->has_data_extent()) return ctree::Visit::next;
      key = v.item_key(slot);
      disk_bytenr = fe->disk_bytenr;
      return ctree::Visit::stop;
    }));
  }
  REQUIRE(key.has_value());
  constexpr u64 BAD = 4096 + 512;
  {
    auto fs = testing::open_memory_fs(image, true);
    REQUIRE(fs.has_value());
    auto t = transaction::Transaction::start(**fs);
    REQUIRE(t.has_value());
    transaction::Reservation r;
    r.items_updated = 1;
    REQUIRE((*t)->reserve(r).has_value());
    auto sv = (*t)->root(sv2);
    REQUIRE(sv.has_value());
    ctree::Path p;
    auto found = ctree::search_slot_for_write(**t, **sv, *key, 0, p);
    REQUIRE_MESSAGE(found.has_value(), (found ? "" : found.error().message));
    REQUIRE(*found);
    auto d = ctree::item_data_mut(**t, p);
    REQUIRE(d.size() >= sizeof(format::FileExtentItem));
    format::store_le<u64>(d.data() + offsetof(format::FileExtentItem, disk_num_bytes), BAD);
    REQUIRE((*t)->commit().has_value());
  }
  auto fs = testing::open_memory_fs(image, false);
  REQUIRE(fs.has_value());
  auto quota = qgroup::read_quota(**fs);
  REQUIRE(quota.has_value());
  REQUIRE(quota->has_value());
  auto c = qgroup::compute_qgroups(**fs, **quota);
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().code == Errc::corrupt);
  CHECK(c.error().bytenr.has_value());
  const std::string& m = c.error().message;
  CHECK(m.find("tree block " + std::to_string(c.error().bytenr.value_or(0)) + " slot ") != std::string::npos);
  CHECK(m.find("data extent " + std::to_string(disk_bytenr) + ": disk_num_bytes " + std::to_string(BAD)) != std::string::npos);
}
