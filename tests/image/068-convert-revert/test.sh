#!/usr/bin/env bash
# 068-convert-revert: a half conversion can be taken back, not only finished
# (issue 12). The half states: `convert --bg-tree --batch 2` and `convert
# --no-bg-tree --batch 2` interrupted after their third commit
# (FSCTL_SIGNAL_AFTER_COMMITS, exit 130), on an image with 11 block groups;
# and, when ../shared/fixtures-bgt is present, btrfstune 6.19's own
# half-from-bgt (which btrfstune cannot resume). The other direction's
# command takes it back: the moved items move back lowest start first.
# A crash at every write of the revert (FSCTL_FAIL_AFTER_WRITES=N, --batch 1)
# must leave either the half state with fewer groups moved, still obeying
# btrfs-progs' rule (the moved groups are the highest starts, cvtool
# bgs-split), or the original state; the rerun completes; the result has the
# superblock bits of the original direction, passes btrfs check --readonly,
# and the kernel mounts it with every file intact.
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/060-convert-fresh/cvlib.sh"
need_mount

mk_many_bg "$T/base.img" "$T/mnt"
mkdir "$T/mnt/d"
head -c 3M /dev/urandom > "$T/mnt/d/data"
for i in 1 2 3 4 5 6 7 8; do head -c $((i * 1000)) /dev/urandom > "$T/mnt/d/s$i"; done
sums "$T/mnt/d" > "$T/sums.base"   # not the 7 GiB of preallocated files: hashing their zeros took minutes
umount "$T/mnt"; CV_MNTS=()
cp --sparse=always "$T/base.img" "$T/bgt.img"
"$FSCTL" -q convert --bg-tree "$T/bgt.img" > /dev/null

# revert_loop NAME HALF_IMG REVERT_DIR FINAL_TREE FINAL_STATE FEATURES
revert_loop() {
  local name=$1 half=$2 dir=$3 tree=$4 st1=$5 feat=$6 n=1 crashed=0 halfs=0 rc out
  bgjson "$T/bg.half" "$half"
  read -r st0 _ _ < <($CVTOOL bgs-split "$T/bg.half" "$T/bg.half") || fail "$name: the half state is not a clean split"
  "$FSCTL" convert -n "$dir" "$half" | grep_q "^dry run: taking back a half conversion" || fail "$name: the dry run does not say taking back"
  while :; do
    cp --sparse=always "$half" "$T/c.img"
    rc=0
    FSCTL_FAIL_AFTER_WRITES=$n "$FSCTL" -q convert "$dir" --batch 1 "$T/c.img" > /dev/null 2>&1 || rc=$?
    [ "$rc" = 0 ] && break
    [ "$rc" = 86 ] || fail "$name crash $n: exit $rc, expect 86"
    crashed=$((crashed + 1))
    bgjson "$T/bg.c" "$T/c.img" || fail "$name crash $n: fsctl cannot read it"
    read -r st nb ne < <($CVTOOL bgs-split "$T/bg.half" "$T/bg.c") || fail "$name crash $n: not a clean split (btrfs-progs' rule broken)"
    [ "$st" = "$st0" ] && halfs=$((halfs + 1))
    out=$("$FSCTL" convert "$dir" --batch 1 "$T/c.img") || fail "$name crash $n: rerun failed"
    bgjson "$T/bg.r" "$T/c.img"
    $CVTOOL bgs-same "$T/bg.half" "$T/bg.r" "$tree" "$st1" > /dev/null || fail "$name crash $n: rerun's block groups"
    n=$((n + 1))
    [ "$n" -lt 400 ] || fail "$name never finished"
  done
  out=$("$FSCTL" convert "$dir" --batch 1 "$half") || fail "$name: revert failed"
  grep -q "^took back the half conversion" <<< "$out" || fail "$name: summary: $out"
  bgjson "$T/bg.r" "$half"
  $CVTOOL bgs-same "$T/bg.half" "$T/bg.r" "$tree" "$st1" > /dev/null || fail "$name: block groups after the revert"
  expect_features "$half" "$feat"
  check_clean "$name, taken back" "$half"
  echo "$name: taken back with $dir; crashed at each of $crashed writes: $halfs still half (rule kept), every rerun completed; check clean"
}

mount_and_sum() {  # IMG NAME
  mount_fs "$T/mnt" "$1" || fail "$2: the kernel does not mount it"
  sums "$T/mnt/d" > "$T/sums.now"
  umount "$T/mnt"; CV_MNTS=()
  cmp -s "$T/sums.base" "$T/sums.now" || fail "$2: files differ after the revert"
}

cp --sparse=always "$T/base.img" "$T/h1.img"
rc=0; FSCTL_SIGNAL_AFTER_COMMITS=3 "$FSCTL" -q convert --bg-tree --batch 2 "$T/h1.img" > /dev/null 2>&1 || rc=$?
[ "$rc" = 130 ] || fail "could not interrupt --bg-tree (exit $rc)"
revert_loop "half to the bg tree" "$T/h1.img" --no-bg-tree EXTENT_TREE extent-tree extent
mount_and_sum "$T/h1.img" "half to the bg tree"

cp --sparse=always "$T/bgt.img" "$T/h2.img"
rc=0; FSCTL_SIGNAL_AFTER_COMMITS=3 "$FSCTL" -q convert --no-bg-tree --batch 2 "$T/h2.img" > /dev/null 2>&1 || rc=$?
[ "$rc" = 130 ] || fail "could not interrupt --no-bg-tree (exit $rc)"
revert_loop "half back to the extent tree" "$T/h2.img" --bg-tree BLOCK_GROUP_TREE block-group-tree bgt
mount_and_sum "$T/h2.img" "half back to the extent tree"

FX=$SHARED/fixtures-bgt
if [ -f "$FX/half-from-bgt.img.zst" ]; then
  $CVTOOL unpack-zst "$FX/half-from-bgt.img.zst" "$T/hf.img" > /dev/null
  bgjson "$T/bg.hf" "$T/hf.img"
  out=$("$FSCTL" convert --bg-tree "$T/hf.img") || fail "half-from-bgt: revert failed"
  grep -q "^took back the half conversion to the extent tree" <<< "$out" || fail "half-from-bgt: $out"
  bgjson "$T/bg.r" "$T/hf.img"
  $CVTOOL bgs-same "$T/bg.hf" "$T/bg.r" BLOCK_GROUP_TREE block-group-tree > /dev/null || fail "half-from-bgt: block groups after the revert"
  expect_features "$T/hf.img" bgt
  check_clean "half-from-bgt, taken back" "$T/hf.img"
  mount_fs "$T/mnt" "$T/hf.img" || fail "half-from-bgt: the kernel does not mount it after the revert"
  umount "$T/mnt"; CV_MNTS=()
  echo "half-from-bgt (btrfstune's): taken back with --bg-tree, check clean, mounted"
else
  echo "NOTE: $FX/half-from-bgt.img.zst absent: btrfstune's half state not checked"
fi
