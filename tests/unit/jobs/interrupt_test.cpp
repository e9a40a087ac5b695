// SPDX-License-Identifier: GPL-2.0-only
// Interruption of the three write jobs (issue 13; cmd/interrupt.h): a second
// signal (StopRequest level 2) abandons the transaction in progress at its
// next safe point. Here the request is raised at the K-th device request
// (read or write) of the run, for K over the whole run: the job must return
// normally (done, or stopped early) and never an error, the image must pass
// the checker (qgroups exact where quota is on and the job keeps them), and
// a rerun must end where the uninterrupted run ended. Test suite "crash"
// (ctest unit/crash), with the crash loops.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>

#include "lib/io/block_device.h"
#include "tests/unit/jobs/support/crash_loop.h"
#include "tests/unit/jobs/support/fixture.h"

using namespace fsctl;
using namespace fsctl::testing;

namespace {

/// Counts the device requests of an open and raises `stop` to level 2 at
/// request number `at` (0: never), as a second signal arriving then would.
struct Tripwire {
  std::atomic<u64> requests{0};
  u64 at = 0;
  StopRequest* stop = nullptr;
  void tick() {
    if (requests.fetch_add(1) + 1 == at) stop->level.store(2);
  }
};

class TripwireDevice final : public io::BlockDevice {
 public:
  TripwireDevice(std::unique_ptr<io::BlockDevice> inner, std::shared_ptr<Tripwire> wire)
      : inner_(std::move(inner)), wire_(std::move(wire)) {}
  Status read_at(u64 physical, std::span<u8> buf) override {
    wire_->tick();
    return inner_->read_at(physical, buf);
  }
  Status write_at(u64 physical, std::span<const u8> buf) override {
    wire_->tick();
    return inner_->write_at(physical, buf);
  }
  Status flush() override { return inner_->flush(); }
  [[nodiscard]] u64 size() const override { return inner_->size(); }
  [[nodiscard]] u32 logical_block_size() const override { return inner_->logical_block_size(); }
  [[nodiscard]] const std::string& path() const override { return inner_->path(); }

 private:
  std::unique_ptr<io::BlockDevice> inner_;
  std::shared_ptr<Tripwire> wire_;
};

io::DeviceWrapper tripwire_wrapper(std::shared_ptr<Tripwire> wire) {
  return [wire](std::unique_ptr<io::BlockDevice> inner) -> std::unique_ptr<io::BlockDevice> {
    return std::make_unique<TripwireDevice>(std::move(inner), wire);
  };
}

struct Outcome {
  u64 points = 0, stopped = 0, finished = 0;
};

/// The loop: at most `max_points` values of K spread over the run's requests.
Outcome interrupt_at_requests(const char* name, const std::shared_ptr<const io::MemoryImage>& base, const StoppableJob& job,
                              DumpMode mode, bool qgroups_exact, u64 max_points = 160) {
  auto t0 = std::chrono::steady_clock::now();
  const bool quota = has_quota(std::make_shared<io::MemoryImage>(*base));
  Job plain = [&](fs::FsInfo& fs) -> Status {
    FSCTL_TRY(job(fs, nullptr));
    return {};
  };
  // The uninterrupted run: its request count and result.
  auto ref_image = std::make_shared<io::MemoryImage>(*base);
  auto counter = std::make_shared<Tripwire>();
  REQUIRE(run_job(ref_image, plain, tripwire_wrapper(counter), nullptr, 64ULL << 20).has_value());
  auto final_state = open_and_check(ref_image, mode, quota);
  REQUIRE_MESSAGE(final_state.has_value(), (final_state ? "" : final_state.error().message));
  const u64 requests = counter->requests.load();
  REQUIRE(requests > 0);
  const u64 step = std::max<u64>(1, requests / max_points);

  Outcome out;
  for (u64 k = 1; k <= requests; k += step) {
    INFO(name << ": stop at request " << k << " of " << requests);
    out.points++;
    auto image = std::make_shared<io::MemoryImage>(*base);
    StopRequest stop;
    auto wire = std::make_shared<Tripwire>();
    wire->at = k;
    wire->stop = &stop;
    Result<bool> stopped = make_error(Errc::io, "not run");
    {
      auto fs = open_memory_fs(image, true, tripwire_wrapper(wire));
      REQUIRE(fs.has_value());
      stopped = job(**fs, &stop);
    }
    REQUIRE_MESSAGE(stopped.has_value(), (stopped ? "" : stopped.error().message));
    (*stopped ? out.stopped : out.finished)++;
    auto now = open_and_check(image, mode, qgroups_exact && quota);
    REQUIRE_MESSAGE(now.has_value(), (now ? "" : now.error().message));
    if (*stopped) {
      REQUIRE(run_job(image, plain, {}, nullptr, 64ULL << 20).has_value());
      now = open_and_check(image, mode, quota);
      REQUIRE_MESSAGE(now.has_value(), (now ? "" : now.error().message));
    }
    CHECK_MESSAGE(now->result == final_state->result, describe_difference(now->result, final_state->result));
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("interrupt/%s: second signal at %" PRIu64 " of %" PRIu64 " device requests: %" PRIu64
              " stopped early, %" PRIu64 " finished, %.2f s\n",
              name, out.points, requests, out.stopped, out.finished, s);
  return out;
}

}  // namespace

TEST_SUITE("crash") {

TEST_CASE("convert both ways --batch 2: a second signal at any device request stops cleanly and resumes") {
  auto base = fixture("convert-16k");
  auto o = interrupt_at_requests("convert-to-bg-tree", base, convert_stoppable(true, 2), DumpMode::exact, false);
  CHECK(o.stopped > 0);
  auto converted = std::make_shared<io::MemoryImage>(*base);
  REQUIRE(run_job(converted, convert_job(true, 2), {}, nullptr, 64ULL << 20).has_value());
  o = interrupt_at_requests("convert-to-extent-tree", converted, convert_stoppable(false, 2), DumpMode::exact, false);
  CHECK(o.stopped > 0);
}

TEST_CASE("balance -m --batch 1 with quota: a second signal at any device request stops cleanly, qgroups exact") {
  auto o = interrupt_at_requests("balance-m", fixture("quota-4k"), balance_stoppable("", 1, false),
                                 DumpMode::placement_free, true);
  CHECK(o.stopped > 0);
}

TEST_CASE("qgroup verify --repair: a second signal at any device request leaves nothing or all of it written") {
  auto o = interrupt_at_requests("qgroup-repair", with_wrong_qgroups(fixture("quota-4k")), repair_stoppable(),
                                 DumpMode::exact, false);
  CHECK(o.stopped > 0);
}

}  // TEST_SUITE("crash")
