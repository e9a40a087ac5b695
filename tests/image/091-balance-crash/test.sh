#!/usr/bin/env bash
# 091-balance-crash: crash consistency of `fsctl balance -m` (DESIGN.md
# invariant 3). The image: nodesize 4K, single metadata, quota on, a
# subvolume with 6,000 small files and 4 snapshots with changes, so it has two
# metadata block groups and relocating them needs several commits (per group:
# one that moves its tree blocks — into a new chunk for the first — and one
# that removes it; --batch 1). The fail point FSCTL_FAIL_AFTER_WRITES=N stops
# the process (exit 86) right after the N-th write request. After each crash:
# btrfs check --readonly (with --qgroup-report) passes and fsctl qgroup verify
# exits 0 — every committed state is a whole filesystem with exact qgroups —
# and rerunning `fsctl balance -m` completes: no original metadata block group
# is left, btrfs check and qgroup verify pass, and (where mount works) the
# kernel mounts it and every file's sha256 equals the original's.
# Crash points: every N up to CRASH_DENSE (default 4: into the first
# commit's writes), then every CRASH_STEP-th (default 31: ~10 more, spread
# over every later commit) until the run completes without crashing, to stay
# in the time budget; CRASH_DENSE=100000 checks every single N (333 points,
# about 12 minutes; all passed when run). Thinned for CI time (was 12 and 13:
# 26 points, ~300 s under load): every single write point of the same job
# (balance -m --batch 1, quota, snapshots, a level-1 qgroup) is covered in
# memory by tests/unit/jobs/crash_test.cpp (unit/crash/balance, "balance -m --batch
# 1 with quota ...: a crash at every write"), with fsctl's checker and exact
# state comparisons; this test keeps a spread of points through a real
# process and btrfs-progs' check as the oracle.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/balance_check.sh"
need_mount
DENSE=${CRASH_DENSE:-4}
STEP=${CRASH_STEP:-31}

BASE="$T/base.img"
mkimg "$BASE" 1G -n 4096 -m single
mkdir -p "$T/mnt"
mount -o loop "$BASE" "$T/mnt"
btrfs quota enable "$T/mnt"
btrfs subvolume create "$T/mnt/sv" > /dev/null
python3 - "$T/mnt/sv" <<'PY'
import os, random, sys
rnd = random.Random(91)
for i in range(6000):
    d = os.path.join(sys.argv[1], "d%02d" % (i // 200))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%04d" % i), "wb") as f:
        f.write(rnd.randbytes(rnd.choice([300, 1500, 9000])))
PY
for s in 1 2 3 4; do
  btrfs subvolume snapshot "$T/mnt/sv" "$T/mnt/snap$s" > /dev/null
  echo "change $s" >> "$T/mnt/sv/d0$s/f000$s"
  rm "$T/mnt/sv/d1$s/f1${s}00" 2>/dev/null || true
done
btrfs quota rescan -w "$T/mnt" > /dev/null
(cd "$T/mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$T/sha.base"
umount "$T/mnt"
"$FSCTL" --format json inspect block-groups "$BASE" > "$T/bg.base"
metadata_starts "$T/bg.base" > "$T/old"
nold=$(wc -l < "$T/old")
[ "$nold" -ge 2 ] || fail "the base image has $nold metadata block groups, expect >= 2"

check_state() {  # IMG WHAT
  local rc
  set +e
  btrfs check --readonly --qgroup-report "$1" > "$T/check.out" 2>&1; rc=$?
  set -e
  [ $rc -eq 0 ] && ! grep -q "are different" "$T/check.out" || { tail -20 "$T/check.out"; fail "$2: btrfs check --readonly --qgroup-report"; }
  "$FSCTL" qgroup verify "$1" > "$T/verify.out" || { tail -5 "$T/verify.out"; fail "$2: fsctl qgroup verify"; }
}

n=1
crashes=0
while :; do
  cp --sparse=always "$BASE" "$T/c.img"
  set +e
  FSCTL_FAIL_AFTER_WRITES=$n "$FSCTL" balance -m --batch 1 "$T/c.img" > "$T/run.out" 2>&1; rc=$?
  set -e
  if [ $rc -eq 0 ]; then
    echo "N=$n: the run completed ($(tail -2 "$T/run.out" | head -1))"
    break
  fi
  [ $rc -eq 86 ] || { cat "$T/run.out"; fail "N=$n: exit $rc, expect 86 (fail point) or 0"; }
  crashes=$((crashes + 1))
  check_state "$T/c.img" "after a crash at write $n"
  "$FSCTL" balance -m --batch 1 "$T/c.img" > "$T/rerun.out" 2>&1 || { cat "$T/rerun.out"; fail "N=$n: the rerun failed"; }
  check_state "$T/c.img" "after the rerun of crash $n"
  "$FSCTL" --format json inspect block-groups "$T/c.img" > "$T/bg.after"
  python3 - "$T/bg.after" "$T/old" <<'PY' || fail "N=$n: an original metadata block group survived the rerun"
import json, sys
now = {b["start"] for b in json.load(open(sys.argv[1]))["block_groups"]}
old = {int(x) for x in open(sys.argv[2]).read().split()}
assert not (now & old), sorted(now & old)
PY
  if [ $n -lt "$DENSE" ]; then n=$((n + 1)); else n=$((n + STEP)); fi
  [ $n -lt 2000 ] || fail "no complete run after 2000 write requests"
done
[ $crashes -ge 4 ] || fail "only $crashes crash points: the run is too small to test"
# The last rerun image: the kernel mounts it and the files are unchanged.
mount -o loop,ro "$T/c.img" "$T/mnt"
(cd "$T/mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$T/sha.after"
umount "$T/mnt"
cmp -s "$T/sha.base" "$T/sha.after" || fail "file contents changed"
echo "PASS: $crashes crash points, each a committed state that btrfs check and qgroup verify accept, each rerun complete"
