// SPDX-License-Identifier: GPL-2.0-only
// The commit observer of fs::OpenOptions (lib/fs/commit_observer.h): one
// record per committed transaction with its transid, reserved and used
// bytes, blocks written and the open's label; none for a failed commit;
// phase timings only when it asks for them.
#include "lib/fs/commit_observer.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lib/io/fault_device.h"
#include "lib/transaction/transaction.h"
#include "tests/unit/jobs/support/fixture.h"

using namespace fsctl;

namespace {
struct Recorder final : fs::CommitObserver {
  std::vector<fs::CommitRecord> commits;
  std::vector<std::string> phases;
  bool timings = false;
  void on_commit(const fs::CommitRecord& r) override { commits.push_back(r); }
  bool wants_phase_timings() const override { return timings; }
  void on_phase(const PhaseTiming& t) override { phases.emplace_back(t.phase); }
};

/// One transaction that changes nothing but the root tree's root and the
/// quota status generation (every commit copies them), committed.
Status empty_commit(fs::FsInfo& fs) {
  FSCTL_TRY_ASSIGN(auto t, transaction::Transaction::start(fs));
  transaction::Reservation r;
  r.items_updated = 1;
  FSCTL_TRY(t->reserve(r));
  return t->commit();
}
}  // namespace

TEST_CASE("the observer sees each commit with the open's label, and phase timings when it asks") {
  auto base = testing::load_fixture("convert-16k");
  REQUIRE(base.has_value());
  auto image = std::make_shared<io::MemoryImage>(**base);
  Recorder rec;
  u64 gen = 0;
  {
    auto fs = testing::open_memory_fs(image, true, {}, &rec);
    REQUIRE(fs.has_value());
    gen = (*fs)->super().generation.get();
    CHECK(&(*fs)->observer() == &rec);
    CHECK((*fs)->phase_sink() == nullptr);
    REQUIRE(empty_commit(**fs).has_value());
    rec.timings = true;
    CHECK((*fs)->phase_sink() == &rec);
    REQUIRE(empty_commit(**fs).has_value());
  }
  REQUIRE(rec.commits.size() == 2);
  CHECK(rec.commits[0].transid == gen + 1);
  CHECK(rec.commits[1].transid == gen + 2);
  for (auto& c : rec.commits) {
    CHECK(c.label == "crash test");
    CHECK(c.used_bytes > 0);
    CHECK(c.used_bytes <= c.reserved_bytes);
    CHECK(c.blocks_written > 0);
  }
  CHECK_FALSE(rec.phases.empty());  // the second commit's block writes were timed

  // A commit whose writes fail is not reported.
  Recorder after;
  auto budget = std::make_shared<io::FaultBudget>(1);
  auto fs = testing::open_memory_fs(image, true, io::fault_wrapper(budget), &after);
  REQUIRE(fs.has_value());
  auto st = empty_commit(**fs);
  REQUIRE_FALSE(st.has_value());
  CHECK(st.error().code == Errc::io);
  CHECK(after.commits.empty());
}
