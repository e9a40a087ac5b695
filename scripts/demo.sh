#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The first command of README.md: installs what is missing (scripts/setup.sh),
# builds a release fsctl (build/), makes a sample btrfs image with mkfs.btrfs,
# fills it through a loop mount when the kernel allows one (files, a subvolume,
# a snapshot), then runs fsctl's main job on it, `fsctl convert --bg-tree`
# (block group items into the block group tree), and verifies the result:
# `btrfs check --readonly`, `fsctl inspect block-groups` (every item now in
# the block group tree), and, when the kernel allows a loop mount, a mount
# with the sha256 of every file compared with before the conversion.
# Exits 0 when every step succeeded.
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
  (cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$work/sums.before"
  run umount "$mnt"
  mounted=0
fi

step "before: fsctl inspect block-groups (items in the extent tree) and btrfs check --readonly"
run "$FSCTL" inspect block-groups "$img"
run btrfs check --readonly "$img"

step "fsctl convert --dry-run --bg-tree: what would be done (writes nothing)"
run "$FSCTL" convert --bg-tree --dry-run "$img"

step "fsctl convert --bg-tree: move every block group item into the block group tree"
run "$FSCTL" convert --bg-tree "$img"

step "verify: btrfs check --readonly (btrfs-progs) accepts the converted image"
run btrfs check --readonly "$img"

step "verify: fsctl inspect block-groups shows every item in the block group tree"
run "$FSCTL" inspect block-groups "$img"
"$FSCTL" inspect block-groups --format json "$img" | python3 -c '
import json, sys
j = json.load(sys.stdin)
trees = {g["item_tree"] for g in j["block_groups"]}
assert j["bg_tree_state"]["state"] == "block-group-tree" and trees == {"BLOCK_GROUP_TREE"}, (j["bg_tree_state"], trees)
print("all", len(j["block_groups"]), "block group items are in the block group tree")'

step "verify: the kernel mounts it and every file is unchanged (sha256)"
if [ -f "$work/sums.before" ] && mount -o loop "$img" "$mnt" 2>"$work/mount.err"; then
  mounted=1
  (cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$work/sums.after"
  run umount "$mnt"
  mounted=0
  if diff -q "$work/sums.before" "$work/sums.after" >/dev/null; then
    echo "$(wc -l <"$work/sums.after") files, all with the same sha256 as before; for example:"
    head -3 "$work/sums.after"
  else
    diff "$work/sums.before" "$work/sums.after" | head
    echo "demo: files differ after the conversion"
    exit 1
  fi
else
  echo "demo: no loop mount here (or the image was not filled): kernel check skipped"
fi

step "fsctl inspect tree-stats: every tree, every tree block read once and verified"
run "$FSCTL" inspect tree-stats "$img"

step "demo: all steps succeeded"
