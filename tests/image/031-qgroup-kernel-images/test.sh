#!/usr/bin/env bash
# 031-qgroup-kernel-images: images made here by mkfs.btrfs and the kernel, at
# nodesize 4K (fs trees of height 3) and 16K. Contents: quota enabled on the
# empty fs; subvolumes A, B, C and a nested one; ~2000 files in A; snapshots, a
# snapshot of a snapshot, files changed/deleted/added after the snapshots;
# cp --reflink across subvolumes and within one; zstd-compressed files (mount
# -o compress=zstd), random (incompressible) files and a sparse file; a
# level-1 qgroup 1/100 = {A, B}, a level-1 qgroup 1/200 over two snapshots
# (and B: a member of two parents), a level-2 qgroup 2/300 over both; limits;
# a preallocated extent partly written, a hole punched into a shared extent; a snapshot deleted and cleaned
# (`btrfs subvolume sync`); then `btrfs quota rescan -w` and `btrfs qgroup show
# --raw -pcre` (the kernel's truth), unmount.
# Proves: every computed rfer/excl equals the kernel's for every qgroup,
# compressed twins equal plain numbers, verify exits 0 with every row ok, and
# `show --format json` equals the kernel's list (numbers, limits, relations,
# level-0 paths).
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../039-qgroup-lib/qg.sh"
need_mount

# files DIR N SEED [SIZE_MIN SIZE_MAX]: N files in sub-directories of 100,
# mixing inline-sized, compressible and random content.
files() {
  python3 - "$@" <<'PY'
import os, random, sys
d, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lo = int(sys.argv[4]) if len(sys.argv) > 4 else 100
hi = int(sys.argv[5]) if len(sys.argv) > 5 else 20000
rnd = random.Random(seed)
for i in range(n):
    sub = os.path.join(d, f"d{i // 100:03d}")
    os.makedirs(sub, exist_ok=True)
    size = rnd.randint(lo, hi)
    kind = i % 3
    if kind == 0:
        data = rnd.randbytes(size)                         # incompressible
    elif kind == 1:
        data = (f"line {i} of a compressible file\n" * (size // 30 + 1)).encode()[:size]
    else:
        data = b"x" * min(size, 1500)                      # inline
    with open(os.path.join(sub, f"f{i:05d}"), "wb") as f:
        f.write(data)
PY
}

# text BYTES WORD: compressible content (no `yes | head`: pipefail would trip on SIGPIPE)
text() { python3 -c 'import sys; n=int(sys.argv[1]); sys.stdout.write(((sys.argv[2]+"\n")*(n//len(sys.argv[2])+1))[:n])' "$1" "$2"; }

scenario() {
  local ns=$1 img="$T/img-$1.img" m="$T/mnt-$1"
  echo "== nodesize $ns"
  mkimg "$img" 1G -n "$ns"
  qg_mount "$img" "$m" compress=zstd
  btrfs quota enable "$m"
  for s in A B C; do btrfs subvolume create "$m/$s" >/dev/null; done
  btrfs subvolume create "$m/A/nested" >/dev/null
  mkdir "$m/snaps"
  files "$m/A" 2000 1
  files "$m/A/nested" 50 2
  files "$m/B" 300 3
  files "$m/C" 100 4 20000 200000
  echo "top level file" > "$m/top.txt"
  head -c 3M /dev/urandom > "$m/A/big1"
  text 4194304 "compressible text for zstd" > "$m/A/big2.zst"
  dd if=/dev/urandom of="$m/A/sparse" bs=64K count=2 seek=100 status=none
  fallocate -l 2M "$m/A/prealloc"                               # preallocated (unwritten) extent
  dd if=/dev/urandom of="$m/A/prealloc" bs=4K count=4 seek=64 conv=notrunc status=none
  head -c 1M /dev/urandom > "$m/B/blob"
  cp --reflink=always "$m/B/blob" "$m/B/blob.clone"            # reflink inside one subvolume
  cp --reflink=always "$m/A/big1" "$m/B/big1.reflink"          # across subvolumes
  cp --reflink=always "$m/A/big2.zst" "$m/C/big2.reflink"      # a compressed extent, across
  sync
  btrfs subvolume snapshot -r "$m/A" "$m/snaps/A.ro" >/dev/null
  btrfs subvolume snapshot "$m/snaps/A.ro" "$m/snaps/A.ro.rw" >/dev/null   # snapshot of a snapshot
  btrfs subvolume snapshot "$m/B" "$m/snaps/B.snap" >/dev/null
  # changes after the snapshots
  rm -rf "$m/A/d003" "$m/A/d007"
  files "$m/A/new" 200 5
  dd if=/dev/urandom of="$m/A/big1" bs=4K count=16 seek=10 conv=notrunc status=none
  echo appended >> "$m/A/d010/f01000"
  fallocate -p -o 65536 -l 131072 "$m/A/big1"                   # punch a hole in a shared extent
  rm -rf "$m/snaps/A.ro.rw/d015"
  dd if=/dev/urandom of="$m/snaps/A.ro.rw/big1" bs=4K count=8 seek=100 conv=notrunc status=none
  text 307200 "rewritten" > "$m/snaps/B.snap/blob"
  cp --reflink=always "$m/snaps/A.ro/big2.zst" "$m/snaps/B.snap/big2.again"
  # qgroups: level 1 with two members, level 1 over snapshots, level 2 over both, limits
  local A B C Aro Arorw
  A=$(btrfs inspect-internal rootid "$m/A"); B=$(btrfs inspect-internal rootid "$m/B")
  C=$(btrfs inspect-internal rootid "$m/C")
  Aro=$(btrfs inspect-internal rootid "$m/snaps/A.ro"); Arorw=$(btrfs inspect-internal rootid "$m/snaps/A.ro.rw")
  # (assign schedules a rescan when the numbers change; wait for it, or the
  # next assign fails with EINPROGRESS)
  assign() { btrfs qgroup assign "$@" "$m" >/dev/null; btrfs quota rescan -W "$m" >/dev/null 2>&1 || true; }
  btrfs qgroup create 1/100 "$m"; assign "0/$A" 1/100; assign "0/$B" 1/100
  btrfs qgroup create 1/200 "$m"; assign "0/$Aro" 1/200; assign "0/$Arorw" 1/200; assign "0/$B" 1/200
  btrfs qgroup create 2/300 "$m"; assign 1/100 2/300; assign 1/200 2/300
  btrfs qgroup limit 100M "0/$C" "$m"; btrfs qgroup limit -e 500M 1/100 "$m"
  # a snapshot that is deleted and cleaned
  btrfs subvolume snapshot "$m/C" "$m/snaps/C.tmp" >/dev/null
  files "$m/snaps/C.tmp/more" 100 6
  sync
  local Ctmp i
  Ctmp=$(btrfs inspect-internal rootid "$m/snaps/C.tmp")
  btrfs subvolume delete -c "$m/snaps/C.tmp" >/dev/null
  btrfs subvolume sync "$m" >/dev/null
  # the cleaner removes qgroup 0/Ctmp after the drop (kernel 6.x); a rescan that
  # overlaps that removal ends inconsistent, so wait for it
  for i in $(seq 50); do
    btrfs qgroup show --raw "$m" 2>/dev/null | grep_q "^0/$Ctmp " || break
    sleep 0.2
  done
  kernel_truth "$m" "$T/truth-$ns.json"
  qg_umount "$m"
  sed 's/^/    /' "$T/truth-$ns.json.txt"
  local lvl
  btrfs inspect-internal dump-tree -t "$A" "$img" > "$T/tree-A-$ns.txt"
  lvl=$(awk '/^(node|leaf) [0-9]+ level/{print $4; exit}' "$T/tree-A-$ns.txt")
  echo "  fs tree of A: root level $lvl"
  if [ "$ns" = 4096 ]; then check "4K: fs tree of A has >= 3 levels" [ "$lvl" -ge 2 ]; fi
  run_rc "$T/verify-$ns.json" "$FSCTL" --format json qgroup verify "$img"
  check "verify exits 0 (rc $RC)" [ "$RC" -eq 0 ]
  check "computed = kernel after rescan (every qgroup)" python3 "$QG" check-computed "$T/verify-$ns.json" "$T/truth-$ns.json"
  check "every row ok" python3 "$QG" check-ok "$T/verify-$ns.json"
  run_rc "$T/show-$ns.json" "$FSCTL" --format json qgroup show "$img"
  check "show exits 0 (rc $RC)" [ "$RC" -eq 0 ]
  check "show = kernel's list (numbers, limits, relations, paths)" python3 "$QG" check-show "$T/show-$ns.json" "$T/truth-$ns.json"
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["stats"]; print("  fsctl:", s)' "$T/verify-$ns.json"
  rm -f "$img"
}

scenario 4096
scenario 16384
qg_finish
