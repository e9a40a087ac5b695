// SPDX-License-Identifier: GPL-2.0-only
// Edit distance and the closest known name (cmd/suggest.h).
#include "cmd/suggest.h"

#include <algorithm>

namespace fsctl::cmd {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest_name(const std::string& typed, const std::vector<std::string>& known) {
  const std::size_t limit = std::max<std::size_t>(1, typed.size() / 3) + 1;
  std::optional<std::string> best;
  std::size_t best_d = limit + 1;
  for (const auto& k : known) {
    std::size_t d = edit_distance(typed, k);
    if (!typed.empty() && k.rfind(typed, 0) == 0) d = std::min(d, limit);  // a prefix: "insp" -> "inspect"
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  return best_d <= limit ? best : std::nullopt;
}

}  // namespace fsctl::cmd
