// SPDX-License-Identifier: GPL-2.0-only
// "did you mean ...?" for a mistyped command: the known name closest to what
// was typed by edit distance.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace fsctl::cmd {

/// Levenshtein distance (insertions, deletions, substitutions; each costs 1)
/// between `a` and `b`, in characters (bytes).
[[nodiscard]] std::size_t edit_distance(const std::string& a, const std::string& b);

/// The name of `known` closest to `typed`, when it is close enough to be a
/// typo: distance at most max(1, typed.size() / 3) + 1, or `typed` is a
/// prefix of it. Ties: the first in `known`. nullopt when none is close.
[[nodiscard]] std::optional<std::string> closest_name(const std::string& typed, const std::vector<std::string>& known);

}  // namespace fsctl::cmd
