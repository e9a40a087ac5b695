#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Stands in for fsctl in the image tests when FSCTL_VALIDATE_JSON=1
# (tests/image/common/lib.sh): runs $FSCTL_REAL with the same arguments,
# passes its stdout, stderr and exit status through, and when the arguments
# ask for --format json, validates what it printed against docs/json/
# (tests/tools/validate_json.py); an invalid document fails the command
# (exit 99) so the test that ran it fails. Not for tests that signal fsctl by
# its pid: the signal reaches this script, not fsctl.
set -u
json=0
prev=
for a in "$@"; do
  { [ "$a" = --format=json ] || { [ "$prev" = --format ] && [ "$a" = json ]; }; } && json=1
  prev=$a
done
[ "$json" = 1 ] || exec "$FSCTL_REAL" "$@"
out=$(mktemp)
rc=0
"$FSCTL_REAL" "$@" > "$out" || rc=$?
cat "$out"
# Exit 86 is the fail point's (FAIL_POINT_EXIT, cmd/env_hooks.h): the process stopped mid-run on purpose.
if [ -s "$out" ] && [ "$rc" -ne 86 ] &&
  ! python3 "$(dirname "$0")/validate_json.py" "$out" > "$out.why" 2>&1; then
  echo "FSCTL_VALIDATE_JSON: fsctl $* printed a document its schema rejects:" >&2
  sed "s|^$out|stdout|" "$out.why" >&2
  rm -f "$out" "$out.why"
  exit 99
fi
rm -f "$out" "$out.why"
exit "$rc"
