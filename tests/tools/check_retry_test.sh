#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# ctest tools/check-retry: check_retry.sh against a fake btrfs that fails with
# the mount status race a given number of times: retried while that is the
# failure (output of the last run only, its exit code), not for any other
# failure, not for other subcommands; the PATH shim finds the next btrfs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir "$d/bin"
cat > "$d/bin/btrfs" <<'FAKE'
#!/usr/bin/env bash
n=$(( $(cat "$FAKE_COUNT" 2>/dev/null || echo 0) + 1 )); echo $n > "$FAKE_COUNT"
if [ "$n" -le "$FAKE_RACES" ]; then echo "Opening filesystem to check..."; echo "ERROR: could not check mount status: No such device" >&2; exit 1; fi
if [ "$FAKE_FAIL" = 1 ]; then echo "ERROR: errors found in extent allocation tree" >&2; exit 1; fi
echo "no error found ($*)"
FAKE
chmod +x "$d/bin/btrfs"
fail() { echo "FAIL: $*" >&2; exit 1; }
run() {  # RACES FAIL ARGS... -> $rc, $out, $err, $calls
  export FAKE_COUNT=$d/count FAKE_RACES=$1 FAKE_FAIL=$2; shift 2
  rm -f "$FAKE_COUNT"; rc=0
  "$here/check_retry.sh" "$d/bin/btrfs" "$@" > "$d/out" 2> "$d/err" || rc=$?
  out=$(cat "$d/out") err=$(cat "$d/err") calls=$(cat "$FAKE_COUNT")
}
run 2 0 check --readonly x.img
[ "$rc" = 0 ] && [ "$calls" = 3 ] && [ "$out" = "no error found (check --readonly x.img)" ] && [ -z "$err" ] ||
  fail "two races then clean: rc $rc, $calls runs, out '$out', err '$err'"
run 9 0 check --readonly x.img
[ "$rc" = 1 ] && [ "$calls" = 5 ] && [[ "$err" == *"could not check mount status"* ]] || fail "a race every time: rc $rc after $calls runs"
run 0 1 check --readonly x.img
[ "$rc" = 1 ] && [ "$calls" = 1 ] && [[ "$err" == *"errors found"* ]] || fail "a real failure is retried or hidden: rc $rc, $calls runs"
run 3 0 inspect-internal dump-super x.img
[ "$rc" = 1 ] && [ "$calls" = 1 ] || fail "not a check: rc $rc after $calls runs"
export FAKE_COUNT=$d/count FAKE_RACES=1 FAKE_FAIL=0
rm -f "$FAKE_COUNT"
out=$(PATH="$here/progs-shim:$d/bin:$PATH" btrfs check --readonly y.img)
[ "$out" = "no error found (check --readonly y.img)" ] && [ "$(cat "$FAKE_COUNT")" = 2 ] || fail "the shim: '$out'"
echo "check_retry: ok"
