#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Makes the fixture images of the in-memory crash tests (tests/unit/jobs/,
# DESIGN.md "Testing"), once; the results are committed as
# tests/data/*.img.zst and described in tests/data/README.md. Needs root
# (a kernel loop mount: the kernel makes the subvolumes, snapshots and
# qgroups), mkfs.btrfs (6.2 here) and zstd. Files are small or inline and
# data extents are preallocated (fallocate writes no data), so the images
# compress to a few hundred KB.
#   usage: tests/data/make-unit-images.sh [OUT_DIR]   (default: this folder)
#   ONLY=NAME makes only that image (e.g. ONLY=squota-4k).
set -euo pipefail
OUT=$(cd "${1:-$(dirname "$0")}" && pwd)
T=$(mktemp -d)
MNT=$T/mnt
mkdir "$MNT"
cleanup() {
  mountpoint -q "$MNT" && umount "$MNT"
  rm -rf "$T"
}
trap cleanup EXIT

# small_files DIR N TAG: N files of 40..400 bytes of repeated text (inline extents).
small_files() {
  local dir=$1 n=$2 tag=$3 i
  mkdir -p "$dir"
  for ((i = 0; i < n; i++)); do
    printf "%s file %d\n" "$tag" "$i" | head -c $((40 + (i * 37) % 360)) > "$dir/f$i"
    [ $((i % 50)) -ne 0 ] || mkdir -p "$dir/d$i"
  done
}

# data_files DIR N: N files of 8..40 KiB of repeated text (regular data extents).
data_files() {
  local dir=$1 n=$2 i
  mkdir -p "$dir"
  for ((i = 0; i < n; i++)); do
    awk -v n=$((8192 + (i % 5) * 8192)) -v t="data $i" \
      'BEGIN { s = ""; while (length(s) < n) s = s t "\n"; printf "%s", substr(s, 1, n) }' > "$dir/data$i"
  done
}

want() { [ -z "${ONLY:-}" ] || [ "$ONLY" = "$1" ]; }

finish() {  # IMG NAME
  umount "$MNT"
  btrfs check --readonly "$1" > /dev/null
  zstd -q -19 -f "$1" -o "$OUT/$2.img.zst"
  echo "$2.img.zst: $(stat -c %s "$OUT/$2.img.zst") bytes, $(btrfs inspect-internal dump-super "$1" | awk '$1 == "nodesize" {print "nodesize " $2}')"
}

# 1. convert-16k: 256 MiB, nodesize 16K (mkfs default), metadata DUP, no
# quota; 7 block groups (five data groups from 96 MiB of preallocated
# files), so a conversion with a batch of 2 commits several times.
if want convert-16k; then
IMG=$T/convert-16k.img
truncate -s 256M "$IMG"
mkfs.btrfs -q -f -n 16384 -U 4f2a6e1c-0b1d-4c55-9a57-5e1f00000001 "$IMG" > /dev/null
mount -o loop "$IMG" "$MNT"
small_files "$MNT/top" 300 top
btrfs -q subvolume create "$MNT/sv1"
small_files "$MNT/sv1/files" 200 sv1
data_files "$MNT/sv1/data" 10
for i in 1 2 3 4 5 6 7 8; do fallocate -l 12M "$MNT/prealloc$i"; done
btrfs -q subvolume snapshot "$MNT/sv1" "$MNT/snap1"
finish "$IMG" convert-16k
fi

# 2. quota-4k: 256 MiB, nodesize 4K (taller trees from little metadata),
# metadata DUP, quota on: subvolume sv1 (1,500 small files and 30 data
# files), its snapshot snap1 with 150 files changed and 100 added in sv1
# afterwards (shared and exclusive blocks), subvolume sv2, and a level-1
# qgroup 1/100 holding sv1 and snap1; numbers made exact by a rescan.
if want quota-4k; then
IMG=$T/quota-4k.img
truncate -s 256M "$IMG"
mkfs.btrfs -q -f -n 4096 -U 4f2a6e1c-0b1d-4c55-9a57-5e1f00000002 "$IMG" > /dev/null
mount -o loop "$IMG" "$MNT"
btrfs quota enable "$MNT"
btrfs -q subvolume create "$MNT/sv1"
small_files "$MNT/sv1/files" 1500 sv1
data_files "$MNT/sv1/data" 30
sync
btrfs -q subvolume snapshot "$MNT/sv1" "$MNT/snap1"
for ((i = 0; i < 1500; i += 10)); do echo changed >> "$MNT/sv1/files/f$i"; done
small_files "$MNT/sv1/new" 100 new
btrfs -q subvolume create "$MNT/sv2"
small_files "$MNT/sv2/files" 300 sv2
data_files "$MNT/sv2/data" 5
sync
sv1=$(btrfs inspect-internal rootid "$MNT/sv1")
snap1=$(btrfs inspect-internal rootid "$MNT/snap1")
btrfs qgroup create 1/100 "$MNT"
btrfs qgroup assign "0/$sv1" 1/100 "$MNT" || true   # exit 1: "quota rescan needed"
btrfs qgroup assign "0/$snap1" 1/100 "$MNT" || true
btrfs quota rescan -w "$MNT" > /dev/null
sync
btrfs qgroup show -pc "$MNT"
finish "$IMG" quota-4k
fi

# 3. squota-4k: 256 MiB, nodesize 4K, metadata DUP, simple quotas
# (tests/tools/quota_ctl.py: the BTRFS_IOC_QUOTA_CTL ioctl; kernel 6.7+)
# enabled after sv0 was written: subvolume sv1 (1,500 small files, 30 data
# files), its snapshot snap1 with 150 files changed, a reflink from sv1 into
# sv2, a level-1 qgroup 1/100 holding sv1 and sv2; the kernel's numbers are
# exact by construction (no rescan under simple quotas).
if want squota-4k; then
IMG=$T/squota-4k.img
truncate -s 256M "$IMG"
mkfs.btrfs -q -f -n 4096 -U 4f2a6e1c-0b1d-4c55-9a57-5e1f00000003 "$IMG" > /dev/null
mount -o loop,noatime "$IMG" "$MNT"
btrfs -q subvolume create "$MNT/sv0"
small_files "$MNT/sv0/files" 200 sv0
data_files "$MNT/sv0/data" 5
sync
python3 "$(dirname "$0")/../tools/quota_ctl.py" enable-simple "$MNT"
btrfs -q subvolume create "$MNT/sv1"
small_files "$MNT/sv1/files" 1500 sv1
data_files "$MNT/sv1/data" 30
sync
btrfs -q subvolume snapshot "$MNT/sv1" "$MNT/snap1"
for ((i = 0; i < 1500; i += 10)); do echo changed >> "$MNT/sv1/files/f$i"; done
btrfs -q subvolume create "$MNT/sv2"
small_files "$MNT/sv2/files" 300 sv2
cp --reflink=always "$MNT/sv1/data/data3" "$MNT/sv2/data3.reflink"
echo more >> "$MNT/sv0/files/f7"
sync
btrfs qgroup create 1/100 "$MNT"
btrfs qgroup assign "0/$(btrfs inspect-internal rootid "$MNT/sv1")" 1/100 "$MNT"
btrfs qgroup assign "0/$(btrfs inspect-internal rootid "$MNT/sv2")" 1/100 "$MNT"
sync
btrfs qgroup show -pc "$MNT"
umount "$MNT"
# btrfs check 6.2 does not know SIMPLE_QUOTA: fsctl's own verify is the check here.
"${FSCTL:?FSCTL must point at a built fsctl for squota-4k}" qgroup verify "$IMG" > /dev/null
zstd -q -19 -f "$IMG" -o "$OUT/squota-4k.img.zst"
echo "squota-4k.img.zst: $(stat -c %s "$OUT/squota-4k.img.zst") bytes"
fi
