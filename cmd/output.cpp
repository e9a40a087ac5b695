// SPDX-License-Identifier: GPL-2.0-only
// Exit code table, error printing, JSON header, the progress display's setup.
#include "cmd/output.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>

#include "cmd/env_hooks.h"

namespace fsctl::cmd {

int exit_code_for(Errc code) {
  switch (code) {
    case Errc::invalid_argument: return EXIT_USAGE;
    case Errc::unsupported: return EXIT_UNSUPPORTED;
    case Errc::busy: return EXIT_BUSY;
    case Errc::nospc: return EXIT_NOSPC;
    case Errc::io:
    case Errc::csum:
    case Errc::corrupt:
    case Errc::not_found:
    case Errc::aborted: return EXIT_CORRUPT;
  }
  return EXIT_CORRUPT;
}

std::unique_ptr<ProgressRenderer> stderr_progress(const GlobalOptions& g, const std::string& label, bool asked) {
  ProgressConfig c;
  c.mode = progress_mode(g.quiet, g.progress || asked, ::isatty(2) == 1);
  c.verbose = g.verbose > 0 && !g.quiet;
  if (c.mode == ProgressMode::off && !c.verbose) return nullptr;
  c.interval = g.progress_interval;
  c.units = g.units_or(UNITS_HUMAN);
  c.label = label;
  if (g.hooks) c.after_update = g.hooks->progress_hold();
  // Under the test hold the test paces the updates: each one is drawn, so
  // that it sees every frame (the throttle has its unit test).
  if (c.after_update) c.tty_interval = 0;
  auto write = [](const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
  };
  return std::make_unique<ProgressRenderer>(std::move(c), write, steady_seconds());
}

nlohmann::ordered_json json_header(const std::string& command) {
  return nlohmann::ordered_json{{"__header", {{"version", "1"}, {"command", command}}}};
}

int report_error(const Error& e) {
  std::cerr << "ERROR: " << e.message << '\n';
  return exit_code_for(e.code);
}

int report_error(const Error& e, const std::string& device) {
  if (e.message.find(device) != std::string::npos) return report_error(e);
  return report_error(e.context(device));
}

std::optional<u64> parse_size(const std::string& s) {
  if (s.empty()) return std::nullopt;
  std::size_t i = 0;
  u64 v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    v = v * 10 + static_cast<u64>(s[i] - '0');
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string suf = s.substr(i);
  for (auto& c : suf) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suf.empty() || suf == "B") return v;
  if (suf == "K" || suf == "KIB" || suf == "KB") return v << 10;
  if (suf == "M" || suf == "MIB" || suf == "MB") return v << 20;
  if (suf == "G" || suf == "GIB" || suf == "GB") return v << 30;
  return std::nullopt;
}

}  // namespace fsctl::cmd
