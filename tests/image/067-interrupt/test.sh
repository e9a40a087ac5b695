#!/usr/bin/env bash
# 067-interrupt: SIGINT during the write commands (issue 13, fsctl(8)
# INTERRUPTION). The signal is raised deterministically right after commit
# K of the run (FSCTL_SIGNAL_AFTER_COMMITS=K; =Kx2 sends two), as Ctrl-C at
# that moment would, for every K of the run:
#  - convert --bg-tree and --no-bg-tree --batch 2 on an image with 10 block
#    groups: exit 130 (0 when K is the last commit: nothing left), the
#    "interrupted (SIGINT)" line names the half state and the command that
#    finishes it, every block group is in exactly one tree, btrfs check
#    --readonly passes when nothing was moved yet; the rerun says "resumed",
#    completes, btrfs check passes and the kernel mounts the result.
#  - --format json: one document with "interrupted": true and state_note.
#  - balance -m --batch 1 with quota and snapshots: exit 130, btrfs check
#    --readonly --qgroup-report passes and fsctl qgroup verify exits 0 at
#    every stop (a balance stops between whole commits), and the rerun
#    completes with the same checks.
# The second-signal path (abandoning a transaction in progress) is tested at
# every write request in memory: ctest unit/interrupt.
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/060-convert-fresh/cvlib.sh"
need_mount

# 10 block groups: 8 data groups of 1 GiB preallocated, metadata, system.
# Built again when the kernel left it inconsistent (build_base, cvlib.sh,
# which also checks it clean).
make_base() {
  mk_many_bg "$T/base.img" "$T/mnt"
  head -c 1M /dev/urandom > "$T/mnt/data"
  umount "$T/mnt"; CV_MNTS=()
}
build_base "$T/base.img" make_base
bgjson "$T/bg.base" "$T/base.img"

# interrupt_loop DIR SRC STATE_BEFORE TREE STATE_AFTER
interrupt_loop() {
  local dir=$1 src=$2 st0=$3 tree=$4 st1=$5 k=1 rc out stopped=0
  while :; do
    C=$T/c.img
    cp --sparse=always "$src" "$C"
    rc=0
    out=$(FSCTL_SIGNAL_AFTER_COMMITS=$k "$FSCTL" convert "$dir" --batch 2 "$C" 2> "$T/err") || rc=$?
    if [ "$rc" = 0 ]; then
      grep -q "block group items in" <<< "$out" || fail "$dir K=$k: exit 0 without the summary: $out"
      break
    fi
    [ "$rc" = 130 ] || { cat "$T/err"; fail "$dir K=$k: exit $rc, expect 130"; }
    stopped=$((stopped + 1))
    grep -q "^interrupted (SIGINT) after $k commits: " <<< "$out" || fail "$dir K=$k: no interrupted line: $out"
    grep -qF "fsctl convert $dir DEVICE...\` finishes it (rerunning resumes)" <<< "$out" || fail "$dir K=$k: the state line does not say how to finish: $out"
    grep -q "stopping after the commit in progress" "$T/err" || fail "$dir K=$k: no note on stderr"
    bgjson "$T/bg.c" "$C" || fail "$dir K=$k: fsctl cannot read the interrupted image"
    read -r st nb ne < <($CVTOOL bgs-split "$T/bg.base" "$T/bg.c") || fail "$dir K=$k: block groups are not split cleanly"
    (( $(sb_get "$C" flags) >> 38 & 1 )) || fail "$dir K=$k: $st without CHANGING_BG_TREE"
    if [ "$dir" = --bg-tree ] && [ "$nb" = 0 ]; then check_clean "$dir K=$k (nothing moved yet)" "$C"; fi
    "$FSCTL" convert -n "$dir" "$C" | grep_q "^dry run: resuming a half conversion" || fail "$dir K=$k: the dry run does not say resuming"
    out=$("$FSCTL" convert "$dir" --batch 2 "$C") || fail "$dir K=$k: rerun failed"
    grep -q "^resumed " <<< "$out" || fail "$dir K=$k: the rerun does not say resumed: $out"
    bgjson "$T/bg.r" "$C"
    $CVTOOL bgs-same "$T/bg.src" "$T/bg.r" "$tree" "$st1" > /dev/null || fail "$dir K=$k: rerun's block groups"
    check_clean "$dir K=$k, after the rerun" "$C"
    mount -o loop,ro "$C" "$T/mnt" || fail "$dir K=$k: the kernel does not mount the finished image"
    umount "$T/mnt"
    k=$((k + 1))
    [ "$k" -lt 100 ] || fail "$dir never finished"
  done
  [ "$stopped" -ge 4 ] || fail "$dir: only $stopped interrupted runs"
  echo "$dir: interrupted after each of $stopped commits: exit 130, state line, resumed, check clean, mounted; K=$k: finished, exit 0"
}

cp "$T/bg.base" "$T/bg.src"
interrupt_loop --bg-tree "$T/base.img" extent-tree BLOCK_GROUP_TREE block-group-tree
cp --sparse=always "$T/base.img" "$T/conv.img"
"$FSCTL" -q convert --bg-tree "$T/conv.img" > /dev/null
bgjson "$T/bg.src" "$T/conv.img"
interrupt_loop --no-bg-tree "$T/conv.img" block-group-tree EXTENT_TREE extent-tree

# JSON mode, two signals: one document, interrupted, the state.
cp --sparse=always "$T/base.img" "$T/j.img"
rc=0
FSCTL_SIGNAL_AFTER_COMMITS=2x2 "$FSCTL" --format json convert --bg-tree --batch 2 "$T/j.img" > "$T/j.json" 2> "$T/err" || rc=$?
[ "$rc" = 130 ] || fail "json: exit $rc, expect 130"
grep -q "stopping at the next safe point" "$T/err" || fail "json: no note for the second signal"
python3 - "$T/j.json" <<'PY' || fail "json: bad document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["interrupted"] is True, d
assert "half converted" in d["state_note"], d["state_note"]
assert d["commits"] == 2, d["commits"]
PY
echo "json: one document, interrupted, state_note"

# Balance with quota: stops between whole commits.
mksnapimg "$T/q.img" 400 40
k=1 stopped=0
while :; do
  cp --sparse=always "$T/q.img" "$T/b.img"
  rc=0
  out=$(FSCTL_SIGNAL_AFTER_COMMITS=$k "$FSCTL" balance -m --batch 1 "$T/b.img" 2> "$T/err") || rc=$?
  [ "$rc" = 0 ] && break
  [ "$rc" = 130 ] || { cat "$T/err"; fail "balance K=$k: exit $rc, expect 130"; }
  stopped=$((stopped + 1))
  grep -q "^interrupted (SIGINT) after $k commits: .*run the same \`fsctl balance\` again" <<< "$out" || fail "balance K=$k: no state line: $out"
  grep -q "^qgroups: verified, every number unchanged and right" <<< "$out" || fail "balance K=$k: qgroups not verified: $out"
  btrfs check --readonly --qgroup-report "$T/b.img" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "balance K=$k: btrfs check"; }
  "$FSCTL" qgroup verify "$T/b.img" > /dev/null || fail "balance K=$k: qgroup verify"
  "$FSCTL" -q balance -m "$T/b.img" > /dev/null || fail "balance K=$k: rerun failed"
  btrfs check --readonly --qgroup-report "$T/b.img" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "balance K=$k: btrfs check after the rerun"; }
  k=$((k + 1))
  [ "$k" -lt 100 ] || fail "balance never finished"
done
[ "$stopped" -ge 2 ] || fail "balance: only $stopped interrupted runs"
echo "balance -m: interrupted after each of $stopped commits: exit 130, check and qgroups clean, rerun completes"
