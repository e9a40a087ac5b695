#!/usr/bin/env bash
# 013-reader-mirrors: a damaged copy of a tree block is survived, and said.
#  - A 2-device image (metadata RAID1, data single) opens with both devices and
#    reads like btrfs-progs. Its SYSTEM chunk is relocated by the kernel so
#    that its first stripe is on devid 2 while METADATA's is on devid 1: each
#    device holds the first-read copy of some tree blocks.
#  - For D in 1 2: the copy on devid D of EVERY tree block is damaged (flipped
#    byte, zeros, or another valid block: csum, bytenr and header checks). Then
#    dump-tree, block-groups and tree-stats exit 0 with output identical to the
#    pristine image (every block read from the other device), and there is one
#    warning per block whose first-read copy was damaged, naming that device's
#    path and physical offset (and none for any other block).
#  - Both copies of the root tree block damaged: a non-zero exit and one error
#    naming the block and both devices.
#  - The same on a single-device DUP image, damaging stripe 0, then stripe 1.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/oracle.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LOOPS=()
cleanup() { release_all "$T/mnt" -- "${LOOPS[@]}"; }
trap cleanup EXIT

# pristine NAME IMG...: fsctl's outputs of the undamaged image in $T/NAME.*
pristine() {
  local n=$1; shift
  "$FSCTL" inspect dump-tree --format json "$@" > "$T/$n.tree.json"
  "$FSCTL" inspect block-groups --format json "$@" > "$T/$n.bg.json"
  "$FSCTL" inspect tree-stats --format json "$@" > "$T/$n.stats.json"
}

# same_as_pristine NAME KIND OUT: fsctl's JSON equals the pristine one (tree-stats
# without its timing and byte counters, which depend on the reads made).
same_as_pristine() {
  python3 - "$T/$1.$2.json" "$3" "$2" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
if sys.argv[3] == "stats":
    for j in (a, b):
        for k in ("seconds", "bytes_read"):
            j.pop(k, None)
a.pop("__header", None); b.pop("__header", None)
if a != b:
    sys.exit("  MISMATCH: %s output of the damaged image differs from the pristine one" % sys.argv[3])
PY
}

# run_damaged NAME WARN_MODE IMG...: dump-tree, block-groups, tree-stats on the
# damaged image: exit 0, output as pristine; dump-tree's warnings exactly the
# damaged first copies (check), the others' warnings a subset of them.
run_damaged() {
  local n=$1; shift
  local rc=0 kind sub
  for kind in tree bg stats; do
    case $kind in tree) sub=dump-tree ;; bg) sub=block-groups ;; stats) sub=tree-stats ;; esac
    if ! "$FSCTL" inspect $sub --format json "$@" > "$T/dmg.$kind.json" 2> "$T/dmg.$kind.err"; then
      echo "  $sub failed on the damaged image: $(head -3 "$T/dmg.$kind.err")"; rc=1; continue
    fi
    same_as_pristine "$n" "$kind" "$T/dmg.$kind.json" || rc=1
  done
  python3 "$HERE/mirrors.py" check "$T/plan.json" "$T/work.super.json" "$T/dmg.tree.err" || rc=1
  for kind in bg stats; do
    python3 "$HERE/mirrors.py" check "$T/plan.json" "$T/work.super.json" "$T/dmg.$kind.err" --subset || rc=1
  done
  return $rc
}

# both_damaged IMG...: every copy of the root tree block damaged: the open fails
# naming the block and each copy's device.
both_damaged() {
  local root
  root=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0]["copies"][0]["superblock"]["root"])' "$T/work.super.json")
  python3 "$HERE/mirrors.py" both "$T/pristine.tree.json" "$T/work.super.json" "$root"
  if "$FSCTL" inspect dump-tree --format json "$@" > /dev/null 2> "$T/both.err"; then
    echo "  MISMATCH: fsctl exits 0 with both copies of tree block $root damaged"; return 1
  fi
  local f
  grep -q "tree block $root" "$T/both.err" || { echo "  MISMATCH: error does not name tree block $root: $(cat "$T/both.err")"; return 1; }
  for f in "$@"; do
    grep -qF "$f" "$T/both.err" || { echo "  MISMATCH: error does not name $f: $(cat "$T/both.err")"; return 1; }
  done
  echo "  both copies damaged: $(grep -m1 ERROR "$T/both.err" | cut -c1-300)"
}

fails=()
start=$SECONDS
# ---------------------------------------------------------------- RAID1, 2 devices
truncate -s 256M "$T/d1.img"; truncate -s 384M "$T/d2.img"
mkfs.btrfs -q -f -n 4096 -m raid1 -d single "$T/d1.img" "$T/d2.img" > /dev/null 2>&1
mixed=no
if [ "$(id -u)" -eq 0 ] && L1=$(losetup -f --show "$T/d1.img" 2>/dev/null); then
  LOOPS+=("$L1")
  L2=$(losetup -f --show "$T/d2.img"); LOOPS+=("$L2")
  mkdir -p "$T/mnt"
  if mount -o device="$L2" "$L1" "$T/mnt" 2>/dev/null; then
    write_files "$T/mnt" 1500
    # devid 2 has more free space: the kernel puts the relocated chunk's first stripe there.
    btrfs balance start -f -s "$T/mnt" > /dev/null
    umount "$T/mnt"
    mixed=yes
  fi
  loop_release "$L1"; loop_release "$L2"; LOOPS=()
fi
[ $mixed = yes ] || echo "NOTE: no loop mount: RAID1 image left as mkfs made it (first stripes all on devid 1)"
oracle_compare raid1 "$T/d1.img" "$T/d2.img" || fails+=(raid1-progs)
pristine pristine "$T/d1.img" "$T/d2.img"
for D in 1 2; do
  echo "== raid1: damage every tree block copy on devid $D"
  cp --sparse=always "$T/d1.img" "$T/w1.img"; cp --sparse=always "$T/d2.img" "$T/w2.img"
  "$FSCTL" inspect dump-super --format json "$T/w1.img" "$T/w2.img" > "$T/work.super.json"
  python3 "$HERE/mirrors.py" damage "$T/pristine.tree.json" "$T/work.super.json" $D all "$T/plan.json" | tee "$T/damage.out"
  run_damaged pristine "$T/w1.img" "$T/w2.img" || fails+=("raid1-devid$D")
  if [ $mixed = yes ] && grep -q '(0 of them the first' "$T/damage.out"; then
    echo "  MISMATCH: no block has its first-read copy on devid $D: the test image is not what it should be"; fails+=("raid1-layout$D")
  fi
done
echo "== raid1: both copies of the root tree block"
cp --sparse=always "$T/d1.img" "$T/w1.img"; cp --sparse=always "$T/d2.img" "$T/w2.img"
both_damaged "$T/w1.img" "$T/w2.img" || fails+=(raid1-both)
rm -f "$T"/d?.img "$T"/w?.img

# ---------------------------------------------------------------- DUP, 1 device
mkdir -p "$T/files"; write_files "$T/files" 1500
mkimg "$T/dup.img" 256M -n 4096 -m dup -d single -r "$T/files"
oracle_compare dup "$T/dup.img" || fails+=(dup-progs)
pristine pristine "$T/dup.img"
for M in 0 1; do
  echo "== dup: damage copy (stripe) $M of every tree block"
  cp --sparse=always "$T/dup.img" "$T/w1.img"
  "$FSCTL" inspect dump-super --format json "$T/w1.img" > "$T/work.super.json"
  python3 "$HERE/mirrors.py" damage "$T/pristine.tree.json" "$T/work.super.json" 1 $M "$T/plan.json"
  run_damaged pristine "$T/w1.img" || fails+=("dup-stripe$M")
done
echo "== dup: both copies of the root tree block"
cp --sparse=always "$T/dup.img" "$T/w1.img"
both_damaged "$T/w1.img" || fails+=(dup-both)

echo "mirror tests in $((SECONDS - start)) s"
[ ${#fails[@]} -eq 0 ] || fail "${fails[*]}"
echo ok
