#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The first command of README.md: installs what is missing (scripts/setup.sh),
# builds a release fsctl (build/), makes a sample btrfs image with mkfs.btrfs,
# fills it through a loop mount when the kernel allows one (files, a subvolume,
# a snapshot), then runs fsctl's main job on it and cross-checks the image
# with `btrfs check --readonly`. Exits 0 when every step succeeded.
#
# For now the main job is `fsctl inspect` (dump-super, block-groups,
# tree-stats). Later issues upgrade this script to run
# `fsctl convert --bg-tree` on the image and verify the result (btrfs check,
# a kernel mount, fsctl inspect block-groups).
#
# Environment: KEEP=1 keeps the image and prints where it is;
# TMPDIR picks where the temporary directory goes (default /var/tmp, which is
# disk-backed on Debian, so fsctl can read the image with O_DIRECT).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "installing missing packages (scripts/setup.sh)"
scripts/setup.sh

step "building fsctl (scripts/build.sh release -> build/fsctl)"
scripts/build.sh release
FSCTL=$PWD/build/fsctl

work=$(mktemp -d "${TMPDIR:-/var/tmp}/fsctl-demo.XXXXXX")
img=$work/sample.img
mnt=$work/mnt
mounted=0
cleanup() {
  if ((mounted)); then umount "$mnt" 2>/dev/null || true; fi
  if [ "${KEEP:-0}" = 1 ]; then echo "demo: kept $img"; else rm -rf "$work"; fi
}
trap cleanup EXIT

step "making a 512 MiB sparse image with mkfs.btrfs"
run truncate -s 512M "$img"
run mkfs.btrfs -q -f -L fsctl-demo "$img"

step "filling the image through a loop mount"
mkdir -p "$mnt"
if [ "$(id -u)" -ne 0 ]; then
  echo "demo: not root, skipping the loop mount: the image stays as mkfs.btrfs made it"
elif ! mount -o loop "$img" "$mnt" 2>"$work/mount.err"; then
  echo "demo: mount -o loop does not work here ($(head -1 "$work/mount.err")), skipping it:"
  echo "      the image stays as mkfs.btrfs made it"
else
  mounted=1
  echo "mounted $img on $mnt"
  echo "writing 300 files in 10 directories, a subvolume 'sub' with 100 files, a snapshot 'snap' of it"
  for d in $(seq 0 9); do
    mkdir "$mnt/dir$d"
    for f in $(seq 0 29); do
      head -c $(((d * 30 + f) * 97 % 20000 + 1)) /dev/urandom >"$mnt/dir$d/file$f"
    done
  done
  run btrfs -q subvolume create "$mnt/sub"
  for f in $(seq 0 99); do head -c $((f * 331 % 60000 + 1)) /dev/urandom >"$mnt/sub/file$f"; done
  head -c 4M /dev/urandom >"$mnt/sub/big"
  run btrfs -q subvolume snapshot "$mnt/sub" "$mnt/snap"
  echo "changing 10 files in the snapshot"
  for f in $(seq 0 9); do head -c 5000 /dev/urandom >"$mnt/snap/file$f"; done
  run umount "$mnt"
  mounted=0
fi

step "fsctl inspect dump-super: the superblock fsctl uses"
run "$FSCTL" inspect dump-super "$img"

step "fsctl inspect block-groups: every block group and where its item lives"
run "$FSCTL" inspect block-groups "$img"

step "fsctl inspect tree-stats: every tree, every tree block read once and verified"
run "$FSCTL" inspect tree-stats "$img"

step "cross-check: btrfs check --readonly (btrfs-progs)"
run btrfs check --readonly "$img"

step "demo: all steps succeeded"
