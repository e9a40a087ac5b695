#!/usr/bin/env bash
# 184-attack-balance-extent-refs: a subvolume leaf in the metadata block group
# whose METADATA_ITEM says refs 0, or refs 2 with its one backref (the count
# the kernel keeps equal to the backrefs, btrfs check "extent item refs
# mismatch"; edited with btrfs_edit, checksum fixed). Found by the attack of
# session 2: balance copied such an item unchanged into the new place (a
# damaged extent tree carried on, exit 0). Expected (fsctl-balance(8)): corrupt
# metadata is found before the first write: exit 3, one ERROR line naming the
# image and the leaf's bytenr, image byte-identical.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_root
need_mount

img0="$T/base.img"
mksnapimg "$img0" 1500 100

# A leaf of subvolume 256 (not its root) in the METADATA block group, and the
# extent-tree leaf and item offset (refs is its first u64) of its METADATA_ITEM.
read -r LEAF ELEAF _ REFSOFF _ < <(subvol_leaf_extent "$img0")
[ -n "${REFSOFF:-}" ] || fail "no METADATA_ITEM found for a subvolume leaf"

for refs in 0 2; do
  img="$T/refs$refs.img"
  cp --sparse=always "$img0" "$img"
  $EDIT setu64 "$img" "$ELEAF" "$REFSOFF" "$refs" > /dev/null
  snap "$img"
  expect 3 "$FSCTL" balance -m "$img"
  unchanged "$img"
  says "$img" "$LEAF" "refs $refs"
  echo "refs $refs: refused before writing: $ERRLINE"
done
echo "184-attack-balance-extent-refs: ok"
