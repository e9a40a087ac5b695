#!/usr/bin/env bash
# 002-test-harness: the test and bench scripts themselves.
# Under `set -o pipefail`, `producer | grep -q PAT` reports "no match" when grep
# exits at the first match while the producer is still writing (the producer
# dies of SIGPIPE, 141). CI failed once on it (100-chunk-alloc:
# `dump-tree -t 11 | grep -q`). This test shows the hazard, shows that
# lib.sh's grep_q is immune, and refuses every early-exiting reader at the end
# of a pipe (grep -q, awk ... exit) in tests/, bench/ and scripts/; and
# checks that only lib.sh's loop_release detaches loop devices, and that
# images are compared with img_sum rather than hashed whole.
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

# Tests run in parallel (ctest -j): a cleanup that detaches a loop device by
# number may detach another test's device (CI: 100-chunk-alloc lost its
# /dev/loop0 to 101's cleanup). Only lib.sh's loop_release detaches, and only
# a device that still backs a file of the test.
bad=$(cd "$FSCTL_SRC" && grep -nE 'losetup[^|;]*[[:space:]]-d|losetup[^|;]*--detach|device scan --forget' \
  tests/image/*/test.sh tests/image/*/*.sh tests/image/common/*.sh 2>/dev/null \
  | grep -v -e '^tests/image/common/lib.sh:' -e '^tests/image/002-test-harness/' -e '^[^:]*:[0-9]*:[[:space:]]*#' || true)
[ -z "$bad" ] || { echo "$bad"; fail "a test detaches or forgets a loop device itself (use loop_release)"; }
# An image's identity is checked with lib.sh's img_sum (the non-zero blocks
# of the data regions): sha256sum of a whole sparse image read every hole as zeros
# (2-10 s a call under load, hundreds of calls: CI time).
bad=$(cd "$FSCTL_SRC" && grep -nE 'sha256sum[[:space:]]+(<|"?\$)|\|[[:space:]]*sha256sum' \
  tests/image/*/test.sh tests/image/*/*.sh tests/image/common/*.sh 2>/dev/null \
  | grep -v -e '^tests/image/002-test-harness/' -e '^[^:]*:[0-9]*:[[:space:]]*#' || true)
[ -z "$bad" ] || { echo "$bad"; fail "an image is hashed whole with sha256sum (use img_sum)"; }
echo "lint: images are compared with img_sum, not sha256sum"
# bench/lib.sh's build_once hands its command $PARTIAL, the file to build;
# given to a command as a literal argument (no shell), it named a file
# '$PARTIAL' in the working directory (bench/memory.sh, scaling.sh). Refused
# now, before anything runs; through bash -c it builds the image.
(
  cd "$T"
  . "$FSCTL_SRC/bench/lib.sh"
  rc=0; build_once "$T/literal.img" touch '$PARTIAL' 2> "$T/literal.err" || rc=$?
  [ "$rc" = 2 ] || fail "build_once ran a command that gets \$PARTIAL literally (rc $rc)"
  [ ! -e "$T/\$PARTIAL" ] && [ ! -e "$T/literal.img" ] || fail "build_once left a file named \$PARTIAL or an image behind"
  grep_q "run it through bash -c" "$T/literal.err" || fail "build_once did not say why: $(cat "$T/literal.err")"
  build_once "$T/shell.img" bash -c 'echo built > "$PARTIAL"' 2> /dev/null || fail "build_once through bash -c failed"
  [ "$(cat "$T/shell.img")" = built ] || fail "build_once through bash -c did not build the image"
) || exit 1
echo "build_once: a command that would get \$PARTIAL literally is refused; bash -c builds"
# img_sum is about bytes, not layout: an unwritten extent (fallocate; the
# journal of mkfs.ext4) is a hole to SEEK_DATA until its clean pages are
# cached by a read, and a hole again once they are evicted. 026 failed in CI
# on it ("ext4.img was modified") with nothing written. A real change of one
# byte still changes the sum.
u="$T/unwritten.img"; truncate -s 8M "$u"
if fallocate -o 1048576 -l 1048576 "$u" 2>/dev/null; then
  cold=$(img_sum "$u")
  python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.pread(fd, 1 << 20, 1 << 20)' "$u"
  warm=$(img_sum "$u")
  python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$u"
  [ "$cold" = "$warm" ] && [ "$warm" = "$(img_sum "$u")" ] || fail "img_sum changed with the page cache of an unwritten extent"
  printf 'x' | dd of="$u" bs=1 seek=1572864 conv=notrunc status=none
  [ "$(img_sum "$u")" != "$cold" ] || fail "img_sum missed a one-byte change"
  echo "img_sum: the same with an unwritten extent's pages cached or not; a one-byte change is seen"
else
  echo "img_sum: unwritten extent case not run (no fallocate here)"
fi
img="$T/own.img"; truncate -s 1M "$img"
if [ "$(id -u)" -eq 0 ] && l=$(losetup -f --show "$img" 2>/dev/null); then
  other=$(mktemp -d); truncate -s 1M "$other/foreign.img"
  l2=$(losetup -f --show "$other/foreign.img")
  loop_release "$l2"
  [ "$(losetup -n -O BACK-FILE "$l2" 2>/dev/null)" = "$(realpath "$other/foreign.img")" ] || fail "loop_release detached a device of another test"
  losetup -d "$l2"; rm -rf "$other"
  loop_release "$l"
  losetup -n -O BACK-FILE "$l" 2>/dev/null | grep_q . && fail "loop_release left this test's device attached"
  echo "loop_release: detaches this test's loop device, leaves another test's alone"
else
  echo "loop_release: not exercised (needs root and loop devices)"
fi
# A failed run's leftovers: a read-only mount and a loop device under the
# scratch directory; the next run of the test starts with them released.
if [ "$(id -u)" -eq 0 ] && stale=$T/stale && mkdir -p "$stale" && truncate -s 128M "$stale/left.img" \
   && mkfs.btrfs -q -f "$stale/left.img" > /dev/null 2>&1 && mkdir -p "$stale/mnt" \
   && mount -o loop,ro "$stale/left.img" "$stale/mnt" 2> /dev/null; then
  rc=0
  FSCTL_TEST_TMP=$stale bash -c 'source "$1/tests/image/common/lib.sh"; [ -z "$(ls -A "$T")" ]' _ "$FSCTL_SRC" || rc=$?
  left=$(mounts_under "$stale")
  stale_mounts_release  # what the run above left, if it failed (all under $T)
  rm -rf "$stale"
  [ $rc -eq 0 ] && [ -z "$left" ] || fail "a stale read-only mount under the scratch directory was not released (rc $rc, left: $left)"
  echo "stale mount: released by the next run's lib.sh"
else
  echo "stale mount: not exercised (needs root and mount -o loop)"
fi
echo ok
