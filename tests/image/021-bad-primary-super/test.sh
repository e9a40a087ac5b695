#!/usr/bin/env bash
# 021-bad-primary-super: the primary superblock (64 KiB) is zeroed, or has a
# flipped byte (bad checksum). fsctl falls back to the mirror at 64 MiB,
# says so in a WARNING naming the image and both offsets, and exits 0 with
# the same output as on the intact image. Image unchanged.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
mkimg "$T/good.img" 256M
"$FSCTL" inspect block-groups --format json "$T/good.img" > "$T/good.json"
for damage in zero flip; do
  img="$T/$damage.img"
  cp "$T/good.img" "$img"
  if [ $damage = zero ]; then
    dd if=/dev/zero of="$img" bs=4096 seek=16 count=1 conv=notrunc status=none
    why="no btrfs magic"
  else
    printf '\xff' | dd of="$img" bs=1 seek=$((65536 + 0x200)) conv=notrunc status=none
    why="checksum mismatch"
  fi
  snap "$img"
  for cmd in "tree-stats" "block-groups" "dump-tree"; do
    expect 0 "$FSCTL" inspect $cmd "$img"
    warns "$img: primary superblock at 65536 is damaged" "$why" "using copy 1 at 67108864"
  done
  expect 0 "$FSCTL" inspect block-groups --format json "$img"
  cmp -s "$T/stdout" "$T/good.json" || fail "block groups differ when read through the mirror superblock"
  expect 0 "$FSCTL" inspect dump-super "$img"
  warns "primary superblock" "67108864"
  grep -q "bytenr=67108864" "$T/stdout" || fail "dump-super does not show the mirror copy"
  unchanged "$img"
done
