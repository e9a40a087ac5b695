#!/usr/bin/env bash
# 020-bad-truncated: a 256 MiB image cut to 60 MiB (every tree block still
# readable, but the device is smaller than its superblock's total_bytes and
# the second DUP copies are gone) and to 100 KiB (superblock only). Proves:
# one "ERROR: " line naming the image and the size mismatch, exit 3, no
# crash, image unchanged. The kernel refuses both ("device total_bytes
# should be at most X but found Y"). dump-super still shows the superblock.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
mkimg "$T/full.img" 256M
for size in 60M 100K; do
  img="$T/cut-$size.img"
  cp "$T/full.img" "$img"; truncate -s "$size" "$img"; snap "$img"
  bytes=$(stat -c %s "$img")
  for cmd in "tree-stats" "block-groups" "dump-tree" "dump-tree -t extent"; do
    expect 3 "$FSCTL" inspect $cmd "$img"
    says "$img" "$bytes bytes" "total_bytes 268435456" "truncated"
  done
  expect 0 "$FSCTL" inspect dump-super "$img"
  unchanged "$img"
done
