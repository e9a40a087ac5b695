#!/usr/bin/env bash
# 026-bad-not-btrfs: images that are not btrfs at all — zeros, random bytes,
# an ext4 filesystem (when mkfs.ext4 exists), and a file too small to hold a
# superblock. Proves: one "ERROR: " line naming the file and why (no btrfs
# magic at 65536 / too small), exit 2 for a file that is simply not btrfs
# (wrong argument), exit 3 for one too small to be anything, no crash,
# files unchanged. dump-super refuses the same way.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
truncate -s 64M "$T/zeros.img"
head -c 16M /dev/urandom > "$T/random.img"
imgs=("$T/zeros.img" "$T/random.img")
if command -v mkfs.ext4 >/dev/null; then
  truncate -s 64M "$T/ext4.img"; mkfs.ext4 -q -F "$T/ext4.img" >/dev/null
  imgs+=("$T/ext4.img")
else
  echo "note: mkfs.ext4 missing, ext4 case not run"
fi
for img in "${imgs[@]}"; do
  snap "$img"
  for cmd in tree-stats block-groups dump-tree dump-super; do
    expect 2 "$FSCTL" inspect $cmd "$img"
    says "$img" "no valid btrfs superblock" "at 65536" "no btrfs magic"
  done
  unchanged "$img"
done
head -c 4096 /dev/urandom > "$T/tiny.img"
snap "$T/tiny.img"
for cmd in tree-stats dump-super; do
  expect 3 "$FSCTL" inspect $cmd "$T/tiny.img"
  says "$T/tiny.img" "4096 bytes" "too small"
done
unchanged "$T/tiny.img"
# A directory and a missing path are refused before any read.
expect 2 "$FSCTL" inspect tree-stats "$T"
says "$T" "not a regular file or block device"
expect 3 "$FSCTL" inspect tree-stats "$T/does-not-exist.img"
says "$T/does-not-exist.img" "No such file"
