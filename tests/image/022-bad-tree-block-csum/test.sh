#!/usr/bin/env bash
# 022-bad-tree-block-csum: a flipped byte in the extent tree root leaf.
# Proves: with DUP metadata and both copies damaged (and with SINGLE
# metadata), every command that reads the block fails with one "ERROR: "
# line naming the image, the bytenr, the physical offset of each copy and
# "csum mismatch", exit 3; with only the first DUP copy damaged the read
# uses mirror 2, warns naming the bad copy, and exits 0. Images unchanged.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
for prof in dup single; do
  img="$T/$prof.img"
  mkimg "$img" 256M -m $prof
  read -r bytenr _ < <($EDIT blocks "$img" extent | head -1)
  read -r -a phys < <($EDIT phys "$img" "$bytenr")
  $EDIT flip "$img" "$bytenr" 300 >/dev/null
  snap "$img"
  for cmd in "tree-stats" "block-groups" "dump-tree -t extent" "dump-tree" "dump-tree -b $bytenr"; do
    expect 3 "$FSCTL" inspect $cmd "$img"
    says "$img" "tree block $bytenr" "csum mismatch"
    for p in "${phys[@]}"; do says "physical $p"; done
  done
  # The other trees still dump before the error.
  expect 3 "$FSCTL" inspect dump-tree "$img"
  grep -q "CHUNK_TREE" "$T/stdout" || fail "dump-tree stopped before the undamaged trees"
  unchanged "$img"
done

# One DUP copy damaged: mirror 2 is used, the bad copy named.
img="$T/one.img"
mkimg "$img" 256M -m dup
read -r bytenr _ < <($EDIT blocks "$img" extent | head -1)
read -r -a phys < <($EDIT phys "$img" "$bytenr")
printf '\xff' | dd of="$img" bs=1 seek=$((phys[0] + 300)) conv=notrunc status=none
snap "$img"
for cmd in "tree-stats" "block-groups" "dump-tree -t extent"; do
  expect 0 "$FSCTL" inspect $cmd "$img"
  warns "tree block $bytenr: bad copy mirror 1 ($img physical ${phys[0]}): csum mismatch" "used mirror 2"
done
unchanged "$img"
