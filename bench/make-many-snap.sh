#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/make-many-snap.sh: the many-snapshot image of issue 14 (run as root;
# needs mkfs.btrfs, a loop mount, python3, ~1 GB of disk for 400 snapshots).
#   mkfs.btrfs -n NODESIZE on an 8 GiB sparse file; quota enabled on the empty
#   filesystem (before any snapshot, so the kernel accounts every one);
#   subvolume `base` with FILES files in directories of 100 (a third inline
#   <= 2000 bytes, a third 3-16 KiB random, a third 3-16 KiB text; seeded);
#   then SNAPS times: a snapshot snapN of base, and CHANGED files of base
#   rewritten (seeded choice, new random contents of a new size), so every
#   snapshot shares most of its tree with its neighbours and the sets of
#   subvolumes referencing a block are nested ranges of snapshots (the shape
#   that makes the root-set memo of qgroup verification and the relocation
#   plan grow with the snapshot count); `btrfs quota rescan -w`; unmount;
#   fstrim through a read-only mount (unused space stays sparse).
# Deterministic apart from mkfs's uuids, timestamps and the kernel's layout.
# Usage: bench/make-many-snap.sh OUT.img [SNAPS [FILES [CHANGED [NODESIZE]]]]
#        (defaults 400 15000 30 16384: the issue's image, ~4 minutes here)
# bench/memory.sh caches it as $FSCTL_BENCH_DIR/many-snap-400.img (default
# /var/tmp/fsctl-bench); never inside the repository.
set -euo pipefail
IMG=${1:?usage: $0 OUT.img [SNAPS [FILES [CHANGED [NODESIZE]]]]}
SNAPS=${2:-400}
FILES=${3:-15000}
CHANGED=${4:-30}
NODESIZE=${5:-16384}
[ "$(id -u)" = 0 ] || { echo "$0: needs root (loop mount)" >&2; exit 2; }
W=$(mktemp -d)
MNT=$W/mnt
mkdir -p "$MNT"
LOOP=
cleanup() {
  if mountpoint -q "$MNT"; then umount "$MNT" || true; fi
  if [ -n "$LOOP" ]; then losetup -d "$LOOP" || true; fi
  rm -rf "$W"
}
trap cleanup EXIT
rm -f "$IMG"
truncate -s 8G "$IMG"
mkfs.btrfs -q -f -n "$NODESIZE" -L manysnap "$IMG" > /dev/null
LOOP=$(losetup -f --show "$IMG")
mount -o noatime "$LOOP" "$MNT"
btrfs quota enable "$MNT"
btrfs subvolume create "$MNT/base" > /dev/null
python3 - "$MNT" "$SNAPS" "$FILES" "$CHANGED" <<'PY'
import os, random, subprocess, sys
mnt, snaps, files, changed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
base = os.path.join(mnt, "base")

def contents(rnd, i):
    kind = i % 3
    if kind == 0:
        return rnd.randbytes(rnd.randint(1, 2000))
    size = rnd.randint(3072, 16384)
    if kind == 1:
        return rnd.randbytes(size)
    return ("file %d line of text %d\n" % (i, rnd.randint(0, 1 << 30)) * (size // 24 + 1)).encode()[:size]

def path(i):
    return os.path.join(base, "d%03d" % (i // 100), "f%05d" % i)

rnd = random.Random(14)
for i in range(files):
    os.makedirs(os.path.dirname(path(i)), exist_ok=True)
    with open(path(i), "wb") as f:
        f.write(contents(rnd, i))
for s in range(1, snaps + 1):
    subprocess.run(["btrfs", "subvolume", "snapshot", base, os.path.join(mnt, "snap%d" % s)],
                   check=True, stdout=subprocess.DEVNULL)
    r = random.Random(1000 + s)
    for i in r.sample(range(files), min(changed, files)):
        with open(path(i), "wb") as f:
            f.write(contents(r, i))
PY
sync
btrfs quota rescan -w "$MNT" > /dev/null
umount "$MNT"
mount -o ro,noatime "$LOOP" "$MNT"
fstrim "$MNT" || true
umount "$MNT"
losetup -d "$LOOP"
LOOP=
echo "built $IMG ($SNAPS snapshots, $FILES files, $CHANGED changed between snapshots, nodesize $NODESIZE)"
