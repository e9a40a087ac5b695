#!/usr/bin/env bash
# 181-attack-balance-missing-metadata-item: a bug found by attack, fixed: the plan now checks every block a tree reaches inside a target has its METADATA_ITEM, before anything is written.
# A subvolume leaf inside the metadata block group whose METADATA_ITEM is gone
# from the extent tree (its key type changed to TREE_BLOCK_REF with btrfs_edit,
# checksum fixed; btrfs check rejects the image). RelocationPlan::make takes
# its targets only from the extent items of the group, so the leaf is neither
# copied nor reported, although the plan reads its parent node and sees its
# bytenr inside the group. Today:
#  - with the block group's `used` lowered to match (a consistent-looking
#    extent tree), `fsctl balance -m --verify-qgroups no` relocates the rest,
#    REMOVES the block group holding the still-referenced leaf and exits 0: the
#    subvolume tree points into unmapped space (btrfs check: "Invalid mapping
#    for 32153600", "bytenr mismatch") — success reported on a filesystem it
#    destroyed;
#  - with `used` untouched, it commits the relocation and then fails with
#    "block group ... still has 4096 bytes used" (exit 3, image written,
#    btrfs check aborts on the result).
# Expected (fsctl-balance(8), fsctl(8)): corrupt metadata is found before the
# first write: exit 3, one ERROR line naming the image and the leaf's bytenr
# (a tree block in a selected group without an extent item), image
# byte-identical.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_root
need_mount

img0="$T/base.img"
mksnapimg "$img0" 1500 100

# A leaf of subvolume 256 (not its root) in the METADATA block group, the
# extent-tree slot of its METADATA_ITEM, and the block group item.
read -r LEAF ELEAF SLOT _ BGLEAF BGOFF USED < <(subvol_leaf_extent "$img0")
[ -n "${SLOT:-}" ] || fail "no METADATA_ITEM found for a subvolume leaf"
# hide_item IMG: key type of the leaf's METADATA_ITEM (169) becomes 176.
hide_item() {
  python3 - "$1" "$ELEAF" "$SLOT" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["FSCTL_SRC"], "tests/image/common"))
import btrfs_edit as E
img, leaf, slot = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def fn(b): b[101 + slot * 25 + 8] = 176
E.edit_block(img, leaf, fn, True)
PY
}
export FSCTL_SRC

# 1. used lowered to match: today exit 0 and the group is removed.
a="$T/a.img"
cp --sparse=always "$img0" "$a"
hide_item "$a" > /dev/null
$EDIT setu64 "$a" "$BGLEAF" "$BGOFF" $((USED - 4096)) > /dev/null
snap "$a"
expect 3 "$FSCTL" balance -m --verify-qgroups no "$a"
unchanged "$a"
says "$a" "$LEAF"

# 2. used untouched: today written, then "still has 4096 bytes used".
b="$T/b.img"
cp --sparse=always "$img0" "$b"
hide_item "$b" > /dev/null
snap "$b"
expect 3 "$FSCTL" balance -m "$b"
unchanged "$b"
says "$b" "$LEAF"
echo "181-attack-balance-missing-metadata-item: ok"
