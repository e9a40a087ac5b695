#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/build-fsctl.sh REV [DIR]: a Release build of fsctl at commit REV of
# this repository, for bench/*.sh --fsctl / --fsctl-old (e.g. the commit
# before a refactoring beside the branch's head, run side by side).
#
# The tree of REV is taken with `git archive` into DIR (default
# /var/tmp/fsctl-build/REV-<short hash>, outside the repository), its full
# hash written to DIR/SOURCE_COMMIT (bench/lib.sh's fsctl_describe prints
# it), and built in DIR/build with
#   cmake -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-Wno-restrict
#   cmake --build DIR/build -j$JOBS --target fsctl        (JOBS default 2)
# (-Wno-restrict: GCC 12 at -O3 reports a false -Werror=restrict inside
# std::string.) An existing finished build of the same commit is reused.
# Prints the binary's path on the last line of stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:?usage: bench/build-fsctl.sh REV [DIR]}
hash=$(git -C "$ROOT" rev-parse --verify "$rev^{commit}")
short=$(git -C "$ROOT" rev-parse --short=7 "$hash")
dir=${2:-/var/tmp/fsctl-build/$(echo "$rev" | tr '/' '_')-$short}
case $dir in "$ROOT"/*) echo "build-fsctl.sh: $dir is inside the repository" >&2; exit 2 ;; esac
if [ -x "$dir/build/fsctl" ] && [ "$(cat "$dir/SOURCE_COMMIT" 2>/dev/null)" = "$hash" ]; then
  echo "$dir/build/fsctl"; exit 0
fi
if [ -e "$dir" ] && [ "$(cat "$dir/SOURCE_COMMIT" 2>/dev/null)" != "$hash" ]; then
  echo "build-fsctl.sh: $dir exists and holds another source (or none); remove it or name another DIR" >&2
  exit 2
fi
mkdir -p "$dir"
git -C "$ROOT" archive "$hash" | tar -x -C "$dir"
echo "$hash" > "$dir/SOURCE_COMMIT"
cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-Wno-restrict >&2
cmake --build "$dir/build" -j"${JOBS:-2}" --target fsctl >&2
echo "$dir/build/fsctl"
