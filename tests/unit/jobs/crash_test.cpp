// SPDX-License-Identifier: GPL-2.0-only
// In-memory crash tests of the three write jobs (DESIGN.md invariant 3):
// each job runs on a fixture image in memory (tests/data/) with a fault
// device that stops after write N, for every N of the run; the surviving
// bytes must open at the last completed commit or the one in flight, pass
// the checker with every tree walked, equal the uninterrupted run's state at
// that generation, and the rerun must end where the uninterrupted run ended
// (crash_loop.h). Test suite "crash" (ctest unit/crash).
#include <doctest/doctest.h>

#include <cinttypes>
#include <cstdio>

#include "lib/ctree/write.h"
#include "lib/format/items.h"
#include "lib/transaction/transaction.h"
#include "tests/unit/jobs/support/crash_loop.h"
#include "tests/unit/jobs/support/fixture.h"

using namespace fsctl;
using namespace fsctl::testing;

namespace {

/// A copy of `base` after `job` ran on it uninterrupted.
std::shared_ptr<const io::MemoryImage> after(const std::shared_ptr<const io::MemoryImage>& base, const Job& job) {
  auto image = std::make_shared<io::MemoryImage>(*base);
  auto fs = open_memory_fs(image, true);
  REQUIRE_MESSAGE(fs.has_value(), (fs ? "" : fs.error().message));
  auto st = job(**fs);
  REQUIRE_MESSAGE(st.has_value(), (st ? "" : st.error().message));
  return image;
}

/// Stops the run after its `after`-th commit, as a first signal would.
class StopAfterCommits final : public fs::CommitObserver {
 public:
  StopAfterCommits(StopRequest& stop, u64 after) : stop_(stop), after_(after) {}
  void on_commit(const fs::CommitRecord&) override {
    if (++commits_ == after_) stop_.level.store(1);
  }

 private:
  StopRequest& stop_;
  u64 after_;
  u64 commits_ = 0;
};

/// A copy of `base` with `job` stopped after `commits` commits.
std::shared_ptr<const io::MemoryImage> interrupted(const std::shared_ptr<const io::MemoryImage>& base, const StoppableJob& job,
                                                   u64 commits) {
  auto image = std::make_shared<io::MemoryImage>(*base);
  StopRequest stop;
  StopAfterCommits observer(stop, commits);
  auto fs = open_memory_fs(image, true, {}, &observer);
  REQUIRE_MESSAGE(fs.has_value(), (fs ? "" : fs.error().message));
  auto st = job(**fs, &stop);
  REQUIRE_MESSAGE(st.has_value(), (st ? "" : st.error().message));
  REQUIRE(*st);
  return image;
}

void run_and_check(const char* name, const std::shared_ptr<const io::MemoryImage>& base, const Job& job,
                   const CrashOptions& o = {}) {
  CrashReport r = crash_at_every_write(base, job, o);
  std::printf("crash/%s: %" PRIu64 " crash points (%" PRIu64 " at the last completed commit, %" PRIu64
              " at the commit in flight) over %" PRIu64 " commits, %.2f s\n",
              name, r.writes, r.old_states, r.new_states, r.commits, r.seconds);
  std::string all;
  for (auto& f : r.failures) all += f + "\n";
  CHECK_MESSAGE(r.failures.empty(), all);
  CHECK(r.writes >= 2 * r.commits);  // at least the blocks and a superblock per commit
}

}  // namespace

TEST_SUITE("crash") {

TEST_CASE("convert --bg-tree --batch 2, then --no-bg-tree --batch 2: a crash at every write") {
  auto base = fixture("convert-16k");
  run_and_check("convert-to-bg-tree", base, convert_job(true, 2));
  run_and_check("convert-to-extent-tree", after(base, convert_job(true, 2)), convert_job(false, 2));
}

TEST_CASE("taking back a half conversion, both ways, --batch 1: a crash at every write") {
  auto base = fixture("convert-16k");
  // Half to the bg tree (mark + 2 batches of 2), taken back by --no-bg-tree.
  run_and_check("revert-half-to-bg-tree", interrupted(base, convert_stoppable(true, 2), 3), convert_job(false, 1));
  // Half back to the extent tree, taken back by --bg-tree.
  run_and_check("revert-half-to-extent-tree", interrupted(after(base, convert_job(true, 2)), convert_stoppable(false, 2), 3),
                convert_job(true, 1));
}

TEST_CASE("convert --bg-tree on an image with quota, snapshots and 4K nodes: a crash at every write") {
  run_and_check("convert-quota-4k", fixture("quota-4k"), convert_job(true, 1));
}

TEST_CASE("balance -m --batch 1 with quota, snapshots and a level-1 qgroup: a crash at every write") {
  CrashOptions o;
  o.result_mode = DumpMode::placement_free;
  o.qgroups_exact_when_crashed = true;
  run_and_check("balance-m", fixture("quota-4k"), balance_job("", 1, false), o);
}

TEST_CASE("balance -m --batch 1 --cache-size 1M: bounded writeback before each commit, a crash at every write") {
  CrashOptions o;
  o.result_mode = DumpMode::placement_free;
  o.qgroups_exact_when_crashed = true;
  o.cache_bytes = 1ULL << 20;
  run_and_check("balance-m-cache-1M", fixture("quota-4k"), balance_job("", 1, false), o);
}

TEST_CASE("balance -mconvert=single -f, then -mconvert=dup: a crash at every write") {
  CrashOptions o;
  o.result_mode = DumpMode::placement_free;
  o.qgroups_exact_when_crashed = true;
  auto base = fixture("quota-4k");
  run_and_check("balance-convert-single", base, balance_job("convert=single", 0, true), o);
  run_and_check("balance-convert-dup", after(base, balance_job("convert=single", 0, true)), balance_job("convert=dup", 0, false), o);
}

TEST_CASE("qgroup verify --repair after an edited QGROUP_INFO: a crash at every write") {
  auto image = with_wrong_qgroups(fixture("quota-4k"));
  run_and_check("qgroup-repair", image, repair_job());
}

TEST_CASE("quota disable on an image with quota, snapshots and a level-1 qgroup: a crash at every write") {
  run_and_check("quota-disable", fixture("quota-4k"), quota_disable_job());
}

TEST_CASE("quota enable after quota disable: a crash at every write") {
  run_and_check("quota-enable", after(fixture("quota-4k"), quota_disable_job()), quota_enable_job());
}

TEST_CASE("balance cancel of a paused kernel balance: a crash at every write") {
  run_and_check("balance-cancel", with_balance_item(fixture("quota-4k")), balance_cancel_job());
}

TEST_CASE("balance -m --batch 1 with simple quotas (owner refs, header owners): a crash at every write") {
  CrashOptions o;
  o.result_mode = DumpMode::placement_free;
  o.qgroups_exact_when_crashed = true;
  run_and_check("balance-m-squota", fixture("squota-4k"), balance_job("", 1, false), o);
}

TEST_CASE("qgroup verify --repair with simple quotas after an edited QGROUP_INFO: a crash at every write") {
  run_and_check("qgroup-repair-squota", with_wrong_qgroups(fixture("squota-4k")), repair_job());
}

}  // TEST_SUITE("crash")
