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
  return nlohmann::ordered_json{{"__header", {{"version", JSON_VERSION}, {"command", command}}}};
}

namespace {

const char* errc_name(Errc code) {
  switch (code) {
    case Errc::io: return "io";
    case Errc::csum: return "csum";
    case Errc::corrupt: return "corrupt";
    case Errc::nospc: return "nospc";
    case Errc::unsupported: return "unsupported";
    case Errc::busy: return "busy";
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::not_found: return "not_found";
    case Errc::aborted: return "aborted";
  }
  return "corrupt";
}

// The device of `devices` that `message` names first, as "DEV:" or "DEV "
// (the messages of lib/ start with the device or name it in parentheses).
std::optional<std::string> named_device(const std::string& message, const std::vector<std::string>& devices) {
  std::optional<std::string> best;
  std::size_t best_pos = std::string::npos;
  for (const auto& d : devices) {
    for (std::size_t pos = message.find(d); pos != std::string::npos && pos < best_pos; pos = message.find(d, pos + 1)) {
      bool starts = pos == 0 || message[pos - 1] == ' ' || message[pos - 1] == '(';
      std::size_t end = pos + d.size();
      bool ends = end == message.size() || message[end] == ':' || message[end] == ' ' || message[end] == ')';
      if (starts && ends) {
        best = d;
        best_pos = pos;
        break;
      }
    }
  }
  return best;
}

nlohmann::ordered_json or_null(const std::optional<u64>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr); }

nlohmann::ordered_json error_document(const std::string& command, nlohmann::ordered_json error) {
  nlohmann::ordered_json out = json_header(command);
  out["error"] = std::move(error);
  return out;
}

}  // namespace

nlohmann::ordered_json error_json(const Error& e, const std::vector<std::string>& devices, std::string_view kind) {
  auto dev = named_device(e.message, devices);
  return nlohmann::ordered_json{{"code", exit_code_for(e.code)},
                                {"kind", kind.empty() ? std::string(errc_name(e.code)) : std::string(kind)},
                                {"message", e.message},
                                {"device", dev ? nlohmann::ordered_json(*dev) : nlohmann::ordered_json(nullptr)},
                                {"devid", or_null(e.devid)},
                                {"bytenr", or_null(e.bytenr)},
                                {"errno", e.sys_errno ? nlohmann::ordered_json(e.sys_errno) : nlohmann::ordered_json(nullptr)}};
}

int print_error(const Error& e) {
  std::cerr << "ERROR: " << e.message << '\n';
  return exit_code_for(e.code);
}

static int report(const GlobalOptions& g, const Error& e, std::string_view kind) {
  int rc = print_error(e);
  if (g.format == Format::json) {
    std::cout << error_document(g.command, error_json(e, g.devices, kind)).dump(2) << '\n';
    std::cout.flush();
  }
  return rc;
}

int report_error(const GlobalOptions& g, const Error& e) { return report(g, e, {}); }

int report_error(const GlobalOptions& g, const Error& e, const std::string& device) {
  if (e.message.find(device) != std::string::npos) return report(g, e, {});
  return report(g, e.context(device), {});
}

int usage_error(const GlobalOptions& g, const std::string& message) {
  report(g, Error{Errc::invalid_argument, 0, message}, "usage");
  return EXIT_USAGE;
}

void print_error_document(const std::string& command, int code, std::string_view kind, const std::string& message) {
  nlohmann::ordered_json err = {{"code", code},      {"kind", std::string(kind)}, {"message", message},
                                {"device", nullptr}, {"devid", nullptr},          {"bytenr", nullptr},
                                {"errno", nullptr}};
  std::cout << error_document(command, std::move(err)).dump(2) << '\n';
  std::cout.flush();
}

bool json_format_requested(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--format=json") return true;
    if (args[i] == "--format" && i + 1 < args.size() && args[i + 1] == "json") return true;
  }
  return false;
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
