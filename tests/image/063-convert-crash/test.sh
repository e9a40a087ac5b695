#!/usr/bin/env bash
# 063-convert-crash: crash consistency of `fsctl convert` (DESIGN.md
# invariant 3) in both directions, on a 330 GiB sparse image with 304 block
# groups (300 preallocated 1 GiB files, 4K nodes: the items sit in many
# extent-tree leaves) and --batch 32 (11 commits). The fail point
# FSCTL_FAIL_AFTER_WRITES=N stops the process (exit 86) right after the N-th
# write request. After each crash the image must be one of:
#  - untouched: no in-progress flag, every item in the source tree, btrfs
#    check --readonly passes;
#  - half-converted: super flag CHANGING_BG_TREE set, `inspect block-groups
#    --format json` lists every block group exactly once, in one of the two
#    trees, the moved ones being the highest starts (btrfs-progs' resume rule);
#    going to the bg tree, btrfs check's complaints are only the
#    half-conversion ones (one "Invalid key type(BLOCK_GROUP_ITEM) found in
#    root(BLOCK_GROUP_TREE)" and one "Chunk[...] is not found in block group"
#    per moved group, and the bytes-used total of the groups it did not load);
#    going back, Debian's check 6.2 cannot read the state at all (it asserts,
#    FORMAT.md), so fsctl's reader is the oracle there;
#  - done: btrfs check passes.
# Then rerunning the same command finishes: the same final block group set,
# every item in the asked tree, btrfs check passes, and the kernel mounts it.
# Crash points: every N up to $CRASH_DENSE (default 4: the first commit,
# the in-progress mark), then every $CRASH_STEP-th N (default 7: ~8 more
# through the batches) until the run completes without crashing, to stay in
# the time budget; CRASH_DENSE=100000 checks every single N. Thinned for CI
# time (was 16 and 11: 19 points a direction, ~200 s under load): every
# single write point of both directions of the same job is covered in
# memory by tests/unit/jobs/crash_test.cpp (unit/crash/convert: "convert --bg-tree
# --batch 2, then --no-bg-tree --batch 2: a crash at every write", the
# half-conversion take-backs, and convert on a quota image with 4K nodes),
# with fsctl's checker and exact state comparisons; this test keeps a spread
# of points on 304 block groups with btrfs-progs' check and the kernel as
# oracles.
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/060-convert-fresh/cvlib.sh"
need_root
DENSE=${CRASH_DENSE:-4}
STEP=${CRASH_STEP:-7}
MOUNT=1
( need_mount ) > /dev/null 2>&1 || { MOUNT=0; echo "NOTE: mount -o loop unavailable: the kernel mount after each rerun is skipped"; }

# The base image: 304 block groups (built again when the kernel left it
# inconsistent: build_base, cvlib.sh, which also checks it clean).
[ "$MOUNT" = 1 ] || skip "needs mount -o loop to make a filesystem with 300 block groups"
make_base() {
  mkimg "$T/base.img" 330G -n 4096
  mount_fs "$T/mnt" "$T/base.img"
  for i in $(seq 1 300); do fallocate -l 1G "$T/mnt/f$i"; done
  head -c 1M /dev/urandom > "$T/mnt/data"
  umount "$T/mnt"; CV_MNTS=()
}
build_base "$T/base.img" make_base
bgjson "$T/bg.base" "$T/base.img"
NBG=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["block_groups"]))' "$T/bg.base")
[ "$NBG" -ge 300 ] || fail "only $NBG block groups"

# half-conversion complaints of btrfs check 6.2 going to the bg tree: nothing else.
check_half_to() {  # IMG MOVED
  local rc=0
  btrfs check --readonly "$1" > "$T/check.half" 2>&1 || rc=$?
  # Nothing moved yet (the first commit: flag and empty tree 11): clean.
  [ "$2" = 0 ] && [ "$rc" = 0 ] && return 0
  [ "$rc" = 1 ] || { tail "$T/check.half"; fail "crash $n: btrfs check exit $rc on a half-converted image, expect 1"; }
  [ "$(grep -c '^Invalid key type(BLOCK_GROUP_ITEM) found in root(BLOCK_GROUP_TREE)$' "$T/check.half")" = "$2" ] ||
    fail "crash $n: btrfs check does not name exactly the $2 moved block groups"
  [ "$(grep -c '^Chunk\[256, 228, [0-9]*\]: length([0-9]*), offset([0-9]*), type([0-9]*) is not found in block group$' "$T/check.half")" = "$2" ] ||
    fail "crash $n: btrfs check's chunk complaints are not the $2 moved block groups"
  if grep -vE '^(Invalid key type\(BLOCK_GROUP_ITEM\) found in root\(BLOCK_GROUP_TREE\)|ignoring invalid key|Chunk\[256, 228, [0-9]+\]: .* is not found in block group|super bytes used [0-9]+ mismatches actual used [0-9]+|ERROR: errors found in extent allocation tree or chunk allocation|found [0-9]+ bytes used, error\(s\) found|\[[1-7]/7\] .*|Opening filesystem to check\.\.\.|Checking filesystem on .*|UUID: .*|total .* bytes: [0-9]+|btree space waste bytes: [0-9]+|file data blocks allocated: [0-9]+| referenced [0-9]+)$' "$T/check.half"; then
    fail "crash $n: btrfs check reports more than the half conversion (lines above)"
  fi
}

# crash_loop DIRECTION SRC_IMG SRC_STATE TREE STATE
crash_loop() {
  local dir=$1 src=$2 st0=$3 tree=$4 st1=$5
  local n=1 untouched=0 half=0 done_=0 tried=0 mounted=0
  while :; do
    # A new file each time: truncating the crashed copy in place is slow here.
    C=$T/c.$n.img
    cp --sparse=always "$src" "$C"
    local rc=0
    FSCTL_FAIL_AFTER_WRITES=$n "$FSCTL" -q convert "$dir" --batch 32 "$C" > /dev/null 2>&1 || rc=$?
    [ "$rc" = 0 ] && { rm -f "$C"; break; }
    [ "$rc" = 86 ] || fail "$dir crash $n: exit $rc, expect the fail point's 86"
    tried=$((tried + 1))
    bgjson "$T/bg.c" "$C" || fail "$dir crash $n: fsctl cannot read the crashed image"
    read -r st nb ne < <($CVTOOL bgs-split "$T/bg.base" "$T/bg.c") || fail "$dir crash $n: block groups are not split cleanly"
    if [ "$st" = "$st0" ]; then
      untouched=$((untouched + 1))
      $CVTOOL bgs-same "$T/bg.src" "$T/bg.c" "$([ "$tree" = BLOCK_GROUP_TREE ] && echo EXTENT_TREE || echo BLOCK_GROUP_TREE)" "$st0" > /dev/null ||
        fail "$dir crash $n: untouched state with moved items"
      check_clean "$dir crash $n (untouched)" "$C"
    elif [ "$st" = "$st1" ]; then
      done_=$((done_ + 1))
      check_clean "$dir crash $n (done)" "$C"
    else
      half=$((half + 1))
      (( $(sb_get "$C" flags) >> 38 & 1 )) || fail "$dir crash $n: $st without CHANGING_BG_TREE"
      if [ "$dir" = --bg-tree ]; then check_half_to "$C" "$nb"; fi
    fi
    # Rerun the same command: it finishes.
    "$FSCTL" -q convert "$dir" --batch 32 "$C" > /dev/null || fail "$dir crash $n: rerun failed"
    bgjson "$T/bg.r" "$C"
    $CVTOOL bgs-same "$T/bg.src" "$T/bg.r" "$tree" "$st1" > /dev/null || fail "$dir crash $n: rerun's block groups"
    check_clean "$dir crash $n, after the rerun" "$C"
    if [ "$MOUNT" = 1 ]; then
      mount -o loop,ro "$C" "$T/mnt" || fail "$dir crash $n: the kernel does not mount the finished image"
      umount "$T/mnt"
      mounted=$((mounted + 1))
    fi
    rm -f "$C" &  # in the background: deleting a big sparse file that was read waits ~1 s here
    if [ "$n" -lt "$DENSE" ]; then n=$((n + 1)); else n=$((n + STEP)); fi
    [ "$n" -lt 5000 ] || fail "$dir never finished"
  done
  echo "$dir: $tried crash points (every N < $DENSE, then every ${STEP}th) of a run that completes by write $n: $untouched untouched, $half half-converted, $done_ done; every rerun finished$([ "$MOUNT" = 1 ] && echo " and mounted")"
}

t0=$SECONDS
cp "$T/bg.base" "$T/bg.src"
crash_loop --bg-tree "$T/base.img" extent-tree BLOCK_GROUP_TREE block-group-tree
echo "  ($((SECONDS - t0)) s)"

t0=$SECONDS
cp --sparse=always "$T/base.img" "$T/conv.img"
"$FSCTL" -q convert --bg-tree --batch 32 "$T/conv.img" > /dev/null
bgjson "$T/bg.src" "$T/conv.img"
crash_loop --no-bg-tree "$T/conv.img" block-group-tree EXTENT_TREE extent-tree
echo "  ($((SECONDS - t0)) s)"
wait
echo ok
