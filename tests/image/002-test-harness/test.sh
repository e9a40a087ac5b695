#!/usr/bin/env bash
# 002-test-harness: the test and bench scripts themselves.
# Under `set -o pipefail`, `producer | grep -q PAT` reports "no match" when grep
# exits at the first match while the producer is still writing (the producer
# dies of SIGPIPE, 141). CI failed once on it (100-chunk-alloc:
# `dump-tree -t 11 | grep -q`). This test shows the hazard, shows that
# lib.sh's grep_q is immune, and refuses every early-exiting reader at the end
# of a pipe (grep -q, awk ... exit) in tests/, bench/ and scripts/.
. "$(dirname "$0")/../common/lib.sh"

# The hazard, made certain: a producer far larger than a pipe buffer.
producer() { seq 1 2000000; }
if producer | grep -q '^1$'; then
  echo "note: grep -q did not trip here (timing); the lint below still holds"
else
  echo "pipefail + grep -q: a match read as no match (as CI saw)"
fi
producer | grep_q '^1$' || fail "grep_q missed a match on a large producer"
if producer | grep_q '^nomatch$'; then fail "grep_q matched nothing and said yes"; fi
echo "grep_q: match and no match right on a 2,000,000-line producer"

# The lint: no pipe ends in an early-exiting reader.
bad=$(cd "$FSCTL_SRC" && grep -nE '\|[[:space:]]*(grep[[:space:]]+-[A-Za-z]*q|awk[^|]*[;{][[:space:]]*exit[[:space:]]*[};])' \
  tests/image/*/test.sh tests/image/common/*.sh bench/*.sh scripts/*.sh .ci/run 2>/dev/null \
  | grep -v -e '^tests/image/002-test-harness/' -e '^[^:]*:[0-9]*:[[:space:]]*#' || true)
[ -z "$bad" ] || { echo "$bad"; fail "a pipe ends in grep -q or awk exit (use grep_q, or < <(...))"; }
echo "lint: no pipe in tests/, bench/ or scripts/ ends in grep -q or awk exit"
echo ok
