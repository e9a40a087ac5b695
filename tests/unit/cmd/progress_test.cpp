// SPDX-License-Identifier: GPL-2.0-only
// cmd/progress.h: counts, rates and ETAs as the progress line prints them,
// the mode chosen for stderr, and the renderer driven by a fake clock: the
// first update drawn at once, redraws throttled, the percentage never going
// back, plain lines without carriage returns, the final frame and newline.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "cmd/progress.h"

using namespace fsctl;
using namespace fsctl::cmd;

namespace {

/// A clock the test moves by hand.
struct FakeClock {
  double now = 100.0;
  SecondsClock fn() {
    return [this] { return now; };
  }
};

ProgressCounts bgs(u64 done, u64 total) {
  ProgressCounts c;
  c.block_groups_done = done;
  c.block_groups_total = total;
  return c;
}

ProgressCounts blocks(u64 done, u64 total) {
  ProgressCounts c;
  c.tree_blocks_done = done;
  c.tree_blocks_total = total;
  c.bytes_done = done * 4096;
  c.bytes_total = total * 4096;
  return c;
}

}  // namespace

TEST_CASE("progress: counts with thousands separators") {
  CHECK(format_count(0) == "0");
  CHECK(format_count(999) == "999");
  CHECK(format_count(1000) == "1,000");
  CHECK(format_count(14500) == "14,500");
  CHECK(format_count(1234567) == "1,234,567");
  CHECK(format_count(~0ULL) == "18,446,744,073,709,551,615");
}

TEST_CASE("progress: durations round up to whole seconds") {
  CHECK(format_duration(0) == "0s");
  CHECK(format_duration(0.2) == "1s");
  CHECK(format_duration(3) == "3s");
  CHECK(format_duration(59.0) == "59s");
  CHECK(format_duration(59.5) == "1m00s");
  CHECK(format_duration(65) == "1m05s");
  CHECK(format_duration(3599) == "59m59s");
  CHECK(format_duration(3600) == "1h00m");
  CHECK(format_duration(3601) == "1h01m");
  CHECK(format_duration(96000) == "26h40m");
  CHECK(format_duration(-1) == "?");
  CHECK(format_duration(std::numeric_limits<double>::infinity()) == "?");
  CHECK(format_duration(1e300) != "?");  // clamped, never overflows
}

TEST_CASE("progress: rates") {
  CHECK(format_rate(0) == "0.0/s");
  CHECK(format_rate(2.54) == "2.5/s");
  CHECK(format_rate(9.94) == "9.9/s");
  CHECK(format_rate(10) == "10/s");
  CHECK(format_rate(3100.4) == "3,100/s");
  CHECK(format_rate(-1) == "?/s");
}

TEST_CASE("progress: the mode for stderr") {
  CHECK(progress_mode(false, false, true) == ProgressMode::tty);
  CHECK(progress_mode(false, true, true) == ProgressMode::tty);
  CHECK(progress_mode(false, true, false) == ProgressMode::lines);
  CHECK(progress_mode(false, false, false) == ProgressMode::off);
  CHECK(progress_mode(true, true, true) == ProgressMode::off);
  CHECK(progress_mode(true, true, false) == ProgressMode::off);
}

TEST_CASE("progress: the line") {
  ProgressLine l;
  l.label = "balance";
  l.counts = blocks(5400, 14500);
  l.percent = 37;
  l.rate = 3100;
  l.eta = 2.9;
  CHECK(format_progress_line(l, UNITS_HUMAN) == "balance: 37% 5,400/14,500 tree blocks, 21.09MiB/56.64MiB, 3,100/s, ETA 3s");
  l.done_in = 4.2;
  CHECK(format_progress_line(l, UNITS_HUMAN) == "balance: 37% 5,400/14,500 tree blocks, 21.09MiB/56.64MiB, 3,100/s, done in 5s");
  l.done_in = -1;
  l.rate = -1;
  l.eta = -1;
  CHECK(format_progress_line(l, UNITS_RAW) == "balance: 37% 5,400/14,500 tree blocks, 22118400/59392000");

  ProgressLine c;
  c.label = "convert";
  c.counts = bgs(40, 106);
  c.percent = 37;
  c.rate = 12.4;
  c.eta = 5.1;
  CHECK(format_progress_line(c, UNITS_HUMAN) == "convert: 37% 40/106 block groups, 12/s, ETA 6s");

  ProgressLine q;  // no total: the count alone
  q.label = "qgroup verify";
  q.counts.tree_blocks_done = 12000;
  q.counts.bytes_done = 12000ULL * 4096;
  q.rate = 30000;
  CHECK(format_progress_line(q, UNITS_HUMAN) == "qgroup verify: 12,000 tree blocks, 46.88MiB, 30,000/s");
}

TEST_CASE("progress: a terminal gets one line redrawn at most every tty_interval") {
  FakeClock clock;
  std::string out;
  ProgressConfig cfg;
  cfg.mode = ProgressMode::tty;
  cfg.label = "convert";
  int updates = 0;
  cfg.after_update = [&] { ++updates; };
  {
    ProgressRenderer r(cfg, [&](const std::string& s) { out += s; }, clock.fn());
    r.on_progress(bgs(10, 110));  // the first update is drawn at once
    CHECK(out == "\rconvert: 9% 10/110 block groups\x1b[K");
    clock.now += 0.0625;
    r.on_progress(bgs(15, 110));  // within 0.1 s: not drawn
    CHECK(out == "\rconvert: 9% 10/110 block groups\x1b[K");
    clock.now += 0.0625;
    out.clear();
    r.on_progress(bgs(20, 110));  // 10 groups in 0.125 s: 80/s, 90 left
    CHECK(out == "\rconvert: 18% 20/110 block groups, 80/s, ETA 2s\x1b[K");
    clock.now += 0.875;
    out.clear();
    r.on_progress(bgs(110, 110));
    CHECK(out == "\rconvert: 100% 110/110 block groups, 100/s, ETA 0s\x1b[K");
    out.clear();
    r.finish();  // the last frame and the end of the line
    CHECK(out == "\rconvert: 100% 110/110 block groups, 100/s, done in 1s\x1b[K\n");
    out.clear();
  }
  CHECK(out.empty());  // finish() twice (the destructor): nothing more
  CHECK(updates == 4);
}

TEST_CASE("progress: the percentage never goes back when a total grows") {
  FakeClock clock;
  std::string out;
  ProgressConfig cfg;
  cfg.mode = ProgressMode::lines;
  cfg.interval = 0;
  cfg.label = "balance";
  ProgressRenderer r(cfg, [&](const std::string& s) { out += s; }, clock.fn());
  r.on_progress(blocks(0, 100));
  clock.now += 1;
  r.on_progress(blocks(50, 100));
  clock.now += 1;
  r.on_progress(blocks(60, 200));  // a later batch found more blocks: 30%, shown as 50%
  CHECK(out.find("balance: 50% 60/200 tree blocks") != std::string::npos);
  clock.now += 1;
  r.on_progress(blocks(180, 200));
  CHECK(out.find("balance: 90% 180/200") != std::string::npos);
}

TEST_CASE("progress: plain lines every interval, no carriage return") {
  FakeClock clock;
  std::string out;
  ProgressConfig cfg;
  cfg.mode = ProgressMode::lines;
  cfg.interval = 1.0;
  cfg.label = "convert";
  ProgressRenderer r(cfg, [&](const std::string& s) { out += s; }, clock.fn());
  r.on_progress(bgs(0, 100));  // the start
  for (int i = 1; i <= 100; ++i) {
    clock.now += 0.125;
    r.on_progress(bgs(static_cast<u64>(i), 100));
  }
  r.finish();
  CHECK(out.find('\r') == std::string::npos);
  CHECK(out.find('\x1b') == std::string::npos);
  // The start, a line a second (12.5 s), the final one.
  CHECK(std::count(out.begin(), out.end(), '\n') == 14);
  CHECK(out.find("convert: 0% 0/100 block groups\n") == 0);
  CHECK(out.find("convert: 8% 8/100 block groups, 8.0/s, ETA 12s\n") != std::string::npos);
  CHECK(out.rfind("convert: 100% 100/100 block groups, 8.0/s, done in 13s\n") != std::string::npos);
}

TEST_CASE("progress: -v step lines go above the redrawn line") {
  FakeClock clock;
  std::string out;
  ProgressConfig cfg;
  cfg.mode = ProgressMode::tty;
  cfg.verbose = true;
  cfg.label = "convert";
  ProgressRenderer r(cfg, [&](const std::string& s) { out += s; }, clock.fn());
  r.on_progress(bgs(0, 4));
  out.clear();
  StepRecord st;
  st.step = 2;
  st.transid = 17;
  st.units = 2;
  st.tree_blocks_written = 5;
  st.used_bytes = 8192;
  clock.now += 0.01;
  r.on_step(st, bgs(2, 4));
  CHECK(out == "\r\x1b[Kconvert: step 2 committed (transid 17): 2 block groups, 5 tree blocks written, 8.00KiB allocated; 2/4 block groups\n");
  out.clear();
  r.on_progress(bgs(2, 4));  // drawn again at once, within the interval
  CHECK(out.rfind("\rconvert: 50% 2/4 block groups", 0) == 0);
}

TEST_CASE("progress: -v alone prints the step lines, no progress") {
  FakeClock clock;
  std::string out;
  ProgressConfig cfg;
  cfg.mode = ProgressMode::off;
  cfg.verbose = true;
  cfg.label = "balance";
  ProgressRenderer r(cfg, [&](const std::string& s) { out += s; }, clock.fn());
  r.on_progress(blocks(0, 10));
  r.on_step(StepRecord{1, 8, 1, 3, 4096}, blocks(10, 10));
  r.on_progress(blocks(10, 10));
  r.finish();
  CHECK(out == "balance: step 1 committed (transid 8): 1 block group, 3 tree blocks written, 4.00KiB allocated; 10/10 tree blocks\n");
}

TEST_CASE("progress: nothing at finish when no update came") {
  FakeClock clock;
  std::string out;
  ProgressConfig cfg;
  cfg.mode = ProgressMode::tty;
  cfg.label = "convert";
  ProgressRenderer r(cfg, [&](const std::string& s) { out += s; }, clock.fn());
  r.finish();
  CHECK(out.empty());
}
