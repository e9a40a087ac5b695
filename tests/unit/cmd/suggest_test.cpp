// SPDX-License-Identifier: GPL-2.0-only
// cmd/suggest.h: edit distance and "did you mean".
#include <doctest/doctest.h>

#include "cmd/suggest.h"

using namespace fsctl::cmd;

TEST_CASE("suggest: edit distance") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("balanse", "balance") == 1);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("shwo", "show") == 2);
}

TEST_CASE("suggest: closest known name") {
  const std::vector<std::string> cmds = {"inspect", "qgroup", "convert", "check", "balance"};
  CHECK(closest_name("balanse", cmds) == "balance");
  CHECK(closest_name("chek", cmds) == "check");
  CHECK(closest_name("qgruop", cmds) == "qgroup");
  CHECK(closest_name("insp", cmds) == "inspect");
  CHECK_FALSE(closest_name("frobnicate", cmds).has_value());
  CHECK_FALSE(closest_name("x", cmds).has_value());
  CHECK(closest_name("dump-supper", {"dump-super", "dump-tree", "tree-stats", "block-groups"}) == "dump-super");
}
