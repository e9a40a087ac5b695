// SPDX-License-Identifier: GPL-2.0-only
// The progress renderer (progress.h): formatting of counts, rates and
// durations, the throttled redraw on a terminal and the plain lines.
#include "cmd/progress.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace fsctl::cmd {

namespace {

/// The unit a line counts in: the first with a total (tree blocks, then
/// block groups), else the first counted.
struct Unit {
  u64 done = 0;
  u64 total = 0;
  const char* name = "";
};

Unit primary_unit(const ProgressCounts& c) {
  if (c.tree_blocks_total) return {c.tree_blocks_done, c.tree_blocks_total, "tree blocks"};
  if (c.block_groups_total) return {c.block_groups_done, c.block_groups_total, "block groups"};
  if (c.tree_blocks_done) return {c.tree_blocks_done, 0, "tree blocks"};
  return {c.block_groups_done, 0, "block groups"};
}

u64 percent_of(const Unit& u) {
  if (!u.total) return 0;
  if (u.done >= u.total) return 100;
  // Floored, and 100 only when done: 99.99% shows 99.
  return std::min<u64>(99, static_cast<u64>(std::floor(static_cast<double>(u.done) * 100.0 / static_cast<double>(u.total))));
}

// Clear to the end of the line (ECMA-48 EL): a shorter frame leaves nothing behind.
constexpr const char* CLEAR_EOL = "\x1b[K";

}  // namespace

SecondsClock steady_seconds() {
  return [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
}

ProgressMode progress_mode(bool quiet, bool asked, bool stderr_tty) {
  if (quiet) return ProgressMode::off;
  if (stderr_tty) return ProgressMode::tty;
  return asked ? ProgressMode::lines : ProgressMode::off;
}

std::string format_count(u64 n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  u64 s = static_cast<u64>(std::ceil(std::min(seconds, 1e9)));
  char buf[48];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llus", static_cast<unsigned long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%llum%02llus", static_cast<unsigned long long>(s / 60), static_cast<unsigned long long>(s % 60));
  } else {
    u64 m = (s + 59) / 60;
    std::snprintf(buf, sizeof buf, "%lluh%02llum", static_cast<unsigned long long>(m / 60), static_cast<unsigned long long>(m % 60));
  }
  return buf;
}

std::string format_rate(double per_second) {
  if (!std::isfinite(per_second) || per_second < 0) return "?/s";
  if (per_second >= 10) return format_count(static_cast<u64>(std::llround(std::min(per_second, 1e15)))) + "/s";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f/s", per_second);
  return buf;
}

std::string format_progress_line(const ProgressLine& l, UnitMode units) {
  const ProgressCounts& c = l.counts;
  Unit u = primary_unit(c);
  std::string s = l.label + ": ";
  if (u.total)
    s += std::to_string(l.percent) + "% " + format_count(u.done) + "/" + format_count(u.total) + " " + u.name;
  else
    s += format_count(u.done) + " " + u.name;
  if (c.bytes_total)
    s += ", " + format_bytes(c.bytes_done, units) + "/" + format_bytes(c.bytes_total, units);
  else if (c.bytes_done)
    s += ", " + format_bytes(c.bytes_done, units);
  if (l.rate >= 0) s += ", " + format_rate(l.rate);
  if (l.done_in >= 0)
    s += ", done in " + format_duration(l.done_in);
  else if (l.eta >= 0)
    s += ", ETA " + format_duration(l.eta);
  return s;
}

ProgressRenderer::ProgressRenderer(ProgressConfig config, Write write, SecondsClock clock)
    : cfg_(std::move(config)), write_(std::move(write)), clock_(std::move(clock)) {}

ProgressRenderer::~ProgressRenderer() { finish(); }

ProgressLine ProgressRenderer::line_now(double now, bool final) {
  ProgressLine l;
  l.label = cfg_.label;
  l.counts = counts_;
  Unit u = primary_unit(counts_);
  shown_percent_ = std::max(shown_percent_, percent_of(u));
  l.percent = shown_percent_;
  double elapsed = now - start_;
  if (elapsed > 0 && u.done > start_done_) l.rate = static_cast<double>(u.done - start_done_) / elapsed;
  bool complete = u.total && u.done >= u.total;
  if (final && complete)
    l.done_in = std::max(elapsed, 0.0);
  else if (!final && u.total && l.rate > 0)
    l.eta = static_cast<double>(u.total - std::min(u.done, u.total)) / l.rate;
  return l;
}

void ProgressRenderer::draw(double now, bool final) {
  last_draw_ = now;
  std::string text = format_progress_line(line_now(now, final), cfg_.units);
  if (cfg_.mode == ProgressMode::tty) {
    write_("\r" + text + CLEAR_EOL);
    drawn_ = true;
  } else if (cfg_.mode == ProgressMode::lines) {
    write_(text + "\n");
  }
}

void ProgressRenderer::on_progress(const ProgressCounts& counts) {
  if (finished_) return;
  double now = clock_();
  counts_ = counts;
  if (!started_) {
    started_ = true;
    start_ = now;
    start_done_ = primary_unit(counts).done;
    draw(now, false);
  } else {
    bool tty = cfg_.mode == ProgressMode::tty;
    double interval = tty ? cfg_.tty_interval : cfg_.interval;
    // On a terminal a line cleared by a step's log line comes back at once.
    if (now - last_draw_ >= interval || (tty && !drawn_)) draw(now, false);
  }
  if (cfg_.after_update) cfg_.after_update();
}

void ProgressRenderer::on_step(const StepRecord& step, const ProgressCounts& counts) {
  if (!cfg_.verbose || finished_) return;
  std::string text = cfg_.label + ": step " + std::to_string(step.step) + " committed (transid " + std::to_string(step.transid) + "): ";
  if (step.units) text += format_count(step.units) + (step.units == 1 ? " block group, " : " block groups, ");
  text += format_count(step.tree_blocks_written) + " tree blocks written, " + format_bytes(step.used_bytes, cfg_.units) + " allocated";
  Unit u = primary_unit(counts);
  text += "; " + format_count(u.done) + (u.total ? "/" + format_count(u.total) : std::string()) + " " + u.name;
  // On a terminal the log line goes above the progress line, which is
  // drawn again below it at the next update.
  write_((drawn_ ? std::string("\r") + CLEAR_EOL : std::string()) + text + "\n");
  drawn_ = false;
}

void ProgressRenderer::finish() {
  if (finished_) return;
  finished_ = true;
  if (!started_ || cfg_.mode == ProgressMode::off) return;
  draw(clock_(), true);
  if (cfg_.mode == ProgressMode::tty) write_("\n");
  drawn_ = false;
}

}  // namespace fsctl::cmd
