// SPDX-License-Identifier: GPL-2.0-only
// PhaseTimer (lib/base/phase_timer.h) reports to the sink its caller gives,
// and without one measures nothing: the library reads no environment.
#include "lib/base/phase_timer.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace fsctl;

namespace {
struct Collect final : PhaseSink {
  std::vector<std::string> lines;
  void on_phase(const PhaseTiming& t) override {
    CHECK(t.seconds >= 0);
    lines.push_back(std::string(t.phase) + "|" + std::string(t.detail));
  }
};
}  // namespace

TEST_CASE("a phase timer hands each mark to its sink, in order, and does nothing without one") {
  Collect sink;
  PhaseTimer t(&sink);
  t.mark("plan");
  t.mark("commit", "(3 blocks)");
  REQUIRE(sink.lines.size() == 2);
  CHECK(sink.lines[0] == "plan|");
  CHECK(sink.lines[1] == "commit|(3 blocks)");
  PhaseTimer off;
  off.mark("nothing");
  PhaseTimer null_sink(nullptr);
  null_sink.mark("nothing");
  CHECK(sink.lines.size() == 2);
}
