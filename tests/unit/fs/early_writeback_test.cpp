// SPDX-License-Identifier: GPL-2.0-only
// Early writeback on a helper thread (FsInfo::start_write_tree_blocks): a
// read that misses the cache for a block being written, and a change of such
// a block, wait for its write; its write error is returned once, by the next
// wait. The device holds every write until the filesystem says it waits
// (CommitObserver::on_writeback_wait), so no test depends on timing: code
// that did not wait would reach the device while the write is held, which
// the device records (and then lets the write go, so nothing hangs).
#include <doctest/doctest.h>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/fs/commit_observer.h"
#include "lib/qgroup/qgroup.h"
#include "lib/transaction/transaction.h"
#include "tests/unit/jobs/support/fixture.h"

using namespace fsctl;

namespace {

/// What the device and the observer saw, shared by both.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool holding = false;  // writes wait until released
  bool released = false;
  bool fail_writes = false;
  std::vector<std::pair<u64, u64>> writing;  // [physical, end) held now
  int reads_during_write = 0;                // reads overlapping a held write
  std::vector<u64> waits;                    // on_writeback_wait bytenrs

  void release() {
    std::lock_guard<std::mutex> g(mu);
    released = true;
    cv.notify_all();
  }
};

class GatedDevice final : public io::BlockDevice {
 public:
  GatedDevice(std::unique_ptr<io::BlockDevice> inner, std::shared_ptr<Gate> gate) : inner_(std::move(inner)), gate_(std::move(gate)) {}
  Status read_at(u64 physical, std::span<u8> buf) override {
    {
      std::lock_guard<std::mutex> g(gate_->mu);
      for (auto [s, e] : gate_->writing)
        if (physical < e && s < physical + buf.size()) {
          ++gate_->reads_during_write;
          gate_->released = true;  // recorded: let the write go
          gate_->cv.notify_all();
        }
    }
    return inner_->read_at(physical, buf);
  }
  Status write_at(u64 physical, std::span<const u8> buf) override {
    {
      std::unique_lock<std::mutex> g(gate_->mu);
      if (gate_->holding) {
        std::pair<u64, u64> range{physical, physical + buf.size()};
        gate_->writing.push_back(range);
        gate_->cv.wait(g, [&] { return gate_->released; });
        gate_->writing.erase(std::find(gate_->writing.begin(), gate_->writing.end(), range));
      }
      if (gate_->fail_writes) return make_error(Errc::io, path() + ": write refused by the test", 5);
    }
    return inner_->write_at(physical, buf);
  }
  Status flush() override { return inner_->flush(); }
  u64 size() const override { return inner_->size(); }
  u32 logical_block_size() const override { return inner_->logical_block_size(); }
  const std::string& path() const override { return inner_->path(); }

 private:
  std::unique_ptr<io::BlockDevice> inner_;
  std::shared_ptr<Gate> gate_;
};

/// Releases the held writes when the filesystem is about to wait for them.
class ReleasingObserver final : public fs::CommitObserver {
 public:
  explicit ReleasingObserver(std::shared_ptr<Gate> gate) : gate_(std::move(gate)) {}
  void on_writeback_wait(u64 bytenr) override {
    {
      std::lock_guard<std::mutex> g(gate_->mu);
      gate_->waits.push_back(bytenr);
    }
    gate_->release();
  }

 private:
  std::shared_ptr<Gate> gate_;
};

struct Opened {
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();
  std::unique_ptr<ReleasingObserver> observer = std::make_unique<ReleasingObserver>(gate);
  std::unique_ptr<fs::FsInfo> fs;
};

Opened open_gated(const std::shared_ptr<io::MemoryImage>& image) {
  Opened o;
  auto gate = o.gate;
  auto fs = testing::open_memory_fs(
      image, true, [gate](std::unique_ptr<io::BlockDevice> d) { return std::make_unique<GatedDevice>(std::move(d), gate); },
      o.observer.get());
  REQUIRE_MESSAGE(fs.has_value(), (fs ? "" : fs.error().message));
  o.fs = std::move(*fs);
  return o;
}

/// A copy of the root tree's root block (same bytenr and bytes): writing it
/// changes nothing on the image.
std::shared_ptr<cache::TreeBlock> copy_of_root_tree_root(fs::FsInfo& fs, ctree::ParentCheck& check) {
  const auto& sb = fs.super();
  check.transid = sb.generation.get();
  check.level = sb.root_level;
  auto b = fs.read_tree_block(sb.root.get(), check);
  REQUIRE(b.has_value());
  auto copy = std::make_shared<cache::TreeBlock>();
  copy->bytenr = (*b)->bytenr;
  copy->data = (*b)->data;
  return copy;
}

}  // namespace

TEST_CASE("a read that misses the cache for a block being written back waits for its write") {
  auto image = std::make_shared<io::MemoryImage>(*testing::fixture("quota-4k"));
  Opened o = open_gated(image);
  ctree::ParentCheck check;
  auto copy = copy_of_root_tree_root(*o.fs, check);
  u64 bytenr = copy->bytenr;
  o.gate->holding = true;
  REQUIRE(o.fs->start_write_tree_blocks({copy}).has_value());
  o.fs->cache().erase(bytenr);
  auto again = o.fs->read_tree_block(bytenr, check);
  REQUIRE_MESSAGE(again.has_value(), (again ? "" : again.error().message));
  CHECK((*again)->data == copy->data);
  CHECK(o.gate->reads_during_write == 0);
  REQUIRE(o.gate->waits.size() == 1);
  CHECK(o.gate->waits[0] == bytenr);
  CHECK(o.fs->wait_writeback().has_value());
}

TEST_CASE("an early writeback's write error is returned once, by the next wait") {
  auto image = std::make_shared<io::MemoryImage>(*testing::fixture("quota-4k"));
  Opened o = open_gated(image);
  ctree::ParentCheck check;
  auto copy = copy_of_root_tree_root(*o.fs, check);
  o.gate->holding = true;
  o.gate->fail_writes = true;
  REQUIRE(o.fs->start_write_tree_blocks({copy}).has_value());
  auto w = o.fs->wait_writeback();
  REQUIRE_FALSE(w.has_value());
  CHECK(w.error().code == Errc::io);
  CHECK(w.error().message.find("write refused by the test") != std::string::npos);
  CHECK(o.fs->wait_writeback().has_value());
  REQUIRE(o.gate->waits.size() == 1);
  CHECK(o.gate->waits[0] == 0);
}

TEST_CASE("a transaction that changes a block again waits for its early writeback first") {
  auto image = std::make_shared<io::MemoryImage>(*testing::fixture("quota-4k"));
  u64 sv2 = 0;
  {
    Opened o = open_gated(image);
    for (auto& s : qgroup::subvolume_roots(*o.fs)) sv2 = std::max(sv2, s.root_id);
    REQUIRE(sv2 > 256);
    auto t = transaction::Transaction::start(*o.fs);
    REQUIRE(t.has_value());
    transaction::Reservation r;
    r.items_updated = 2;
    r.trees_touched = 2;
    REQUIRE((*t)->reserve(r).has_value());
    (*t)->set_writeback_threshold(1);  // every allocation writes back what nobody holds
    o.gate->holding = true;
    // Searches `root_id` for the inode item of its root directory, for
    // writing (its path copied: dirty, new); `flip`: toggles the low byte
    // of its generation and returns its leaf's bytenr.
    format::Key inode{256, format::KeyType::INODE_ITEM, 0};
    auto search_inode = [&](u64 root_id, bool flip) -> u64 {
      auto tree = (*t)->root(root_id);
      REQUIRE(tree.has_value());
      ctree::Path p;
      auto found = ctree::search_slot_for_write(**t, **tree, inode, 0, p);
      REQUIRE_MESSAGE(found.has_value(), (found ? "" : found.error().message));
      if (!flip) return 0;
      REQUIRE(*found);
      ctree::item_data_mut(**t, p)[0] ^= 1;
      return p.leaf()->bytenr;
    };
    u64 leaf = search_inode(sv2, true);
    // Another tree's copy allocates: sv2's new leaf, held by nobody, is
    // written back early (and held at the device).
    (void)search_inode(5, false);
    REQUIRE((*t)->stats().blocks_written_early > 0);
    CHECK(o.gate->waits.empty());
    // Changing sv2's leaf again (back as it was) waits for that write first.
    CHECK(search_inode(sv2, true) == leaf);
    // The first block of the path changed again (sv2's root, or the leaf
    // when the root is the leaf) made it wait, before any other wait.
    REQUIRE_FALSE(o.gate->waits.empty());
    CHECK(o.gate->waits[0] != 0);
    CHECK(o.gate->waits[0] <= leaf);
    CHECK(o.gate->reads_during_write == 0);
    auto c = (*t)->commit();
    REQUIRE_MESSAGE(c.has_value(), (c ? "" : c.error().message));
  }
  // Committed as the change left it: the read-only open verifies every
  // block it reads; the inode item is as before.
  auto fs = testing::open_memory_fs(image, false);
  REQUIRE(fs.has_value());
  auto root = (*fs)->find_root(sv2);
  REQUIRE(root.has_value());
}
