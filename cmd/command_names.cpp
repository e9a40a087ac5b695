// SPDX-License-Identifier: GPL-2.0-only
// Unknown command or subcommand names, found before CLI11 parses (CLI11
// would only say "A subcommand is required"): named, with the closest known
// one (cmd/suggest.h).
#include <string>
#include <vector>

#include "cmd/commands.h"
#include "cmd/suggest.h"

namespace fsctl::cmd {

namespace {

// Whether option `name` of `app` or of an app it falls through to takes a
// value in the next argument ("--format json").
bool takes_value(const CLI::App* app, const std::string& name) {
  for (const CLI::App* a = app; a; a = a->get_parent()) {
    const CLI::Option* o = a->get_option_no_throw(name);
    if (o) return o->get_items_expected_min() > 0;
  }
  return false;
}

}  // namespace

std::optional<std::string> unknown_command(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* cur = &app;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--" || a == "-h" || a == "--help" || a == "--version") return std::nullopt;
    if (a.size() > 1 && a[0] == '-') {
      if (a.find('=') == std::string::npos && takes_value(cur, a)) ++i;
      continue;
    }
    auto subs = cur->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty()) return std::nullopt;  // a positional of a command
    const CLI::App* next = nullptr;
    std::vector<std::string> names;
    for (const CLI::App* s : subs) {
      names.push_back(s->get_name());
      if (s->check_name(a)) next = s;
    }
    if (next) {
      cur = next;
      continue;
    }
    // A command with both subcommands and devices (balance, balance cancel):
    // a word that is no subcommand is its first device.
    if (cur->get_option_no_throw("devices")) return std::nullopt;
    std::string msg = cur == &app ? "unknown command '" + a + "'" : "unknown subcommand '" + a + "' of '" + cur->get_name() + "'";
    if (auto best = closest_name(a, names)) {
      msg += "; did you mean '" + *best + "'?";
    } else {
      msg += " (one of:";
      for (const auto& n : names) msg += " " + n;
      msg += ")";
    }
    return msg;
  }
  return std::nullopt;
}

}  // namespace fsctl::cmd
