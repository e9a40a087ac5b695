#!/usr/bin/env bash
# 080-attack-fst-overlap: the free space tree lists a live tree block as free
# (one FREE_SPACE_EXTENT re-keyed onto the FS tree's root node, checksum
# fixed; btrfs check reports the free space tree as invalid, the kernel still
# mounts the image and lists its files). fsctl convert --bg-tree trusts the
# free space tree when it allocates, so today it puts a new block of its own
# over the FS tree root: exit 0, and the result is unmountable ("level verify
# failed ... wanted 1 found 0"), every file lost. A second case does the same
# in a mixed block group over a file's data extent: exit 0, the file reads EIO.
# Expected: a write command never allocates over an extent the extent tree
# says is in use; it refuses the inconsistent free space tree with exit 3,
# one "ERROR:" line naming the image and the block group / bytenr, and the
# image byte-identical.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_root

# Deterministic content (sizes and bytes fixed) so the layout is the same every run.
mkdir -p "$T/src/d"
python3 - "$T/src" <<'PY'
import os, random, sys
r = random.Random(80)
for i in range(1, 51):
    open(os.path.join(sys.argv[1], f"f{i}"), "wb").write(bytes(r.getrandbits(8) for _ in range(r.randrange(1, 98304))))
for i in range(1, 201):
    open(os.path.join(sys.argv[1], "d", f"s{i}"), "w").write(f"{i}\n")
PY

# items IMG TREE: "blockbytenr slot objectid type offset level" per item of every leaf.
fst_items() {
  "$FSCTL" inspect dump-tree --format json -t "$2" "$1" | python3 -c '
import json,sys
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        k = it["key"]; print(b["bytenr"], it["slot"], k["objectid"], k["type"], k["offset"])'
}
# rekey IMG LEAF SLOT OBJECTID OFFSET: rewrite a key's objectid and offset (csum fixed).
rekey() {
  $EDIT setu64 "$1" "$2" $((101 + 25 * $3)) "$4" >/dev/null
  $EDIT setu64 "$1" "$2" $((101 + 25 * $3 + 9)) "$5" >/dev/null
}

# --- case 1: metadata block group, the FS tree root node listed as free ---
img="$T/meta.img"
mkimg "$img" 512M -n 4096 -r "$T/src"
read -r VICTIM VLEVEL < <("$FSCTL" inspect dump-tree --format json -t fs "$img" | python3 -c '
import json,sys; b=json.load(sys.stdin)["trees"][0]["blocks"][0]; print(b["bytenr"], b["level"])')
[ "$VLEVEL" -ge 1 ] || skip "FS tree root is a leaf on this mkfs; the layout this test needs did not come out"
read -r MSTART MLEN < <("$FSCTL" inspect block-groups --format json "$img" | python3 -c '
import json,sys
for g in json.load(sys.stdin)["block_groups"]:
    if g["flags"] & 4:
        print(g["start"], g["length"]); break')
[ -n "$MSTART" ] || fail "no metadata block group"
# Free space extents of the metadata block group, in key order.
fst_items "$img" free-space | awk -v s="$MSTART" -v e="$((MSTART + MLEN))" '$4 == 199 && $3 >= s && $3 < e' > "$T/ext"
# The extent right before the victim becomes [VICTIM, +4096); every extent
# after it is cut below 2 MiB so allocation falls back to first fit.
read -r LEAF SLOT < <(awk -v v="$VICTIM" '$3 < v {l=$1; s=$2} END {print l, s}' "$T/ext")
NEXT=$(awk -v v="$VICTIM" '$3 > v {print $3; exit}' "$T/ext")
[ -n "$LEAF" ] && [ -n "$NEXT" ] || skip "no free space extent on both sides of the FS root $VICTIM"
rekey "$img" "$LEAF" "$SLOT" "$VICTIM" 4096
awk -v v="$VICTIM" '$3 > v && $5 >= 2097152' "$T/ext" | while read -r l s o ty off; do rekey "$img" "$l" "$s" "$o" 1048576; done
mkdir -p "$T/mnt"
if mount -o loop,ro "$img" "$T/mnt" 2>/dev/null; then
  n=$(ls "$T/mnt" | wc -l); umount "$T/mnt"
  [ "$n" -eq 51 ] || fail "edited image lists $n entries, expect 51"
fi
snap "$img"
expect 3 "$FSCTL" convert --bg-tree "$img"
says "$img"
unchanged "$img"

# --- case 2: mixed block group, a file's data extent listed as free ---
img="$T/mixed.img"
mkimg "$img" 256M --mixed -n 4096 -r "$T/src"
read -r MSTART MLEN < <("$FSCTL" inspect block-groups --format json "$img" | python3 -c '
import json,sys
for g in json.load(sys.stdin)["block_groups"]:
    if g["flags"] & 5 == 5: print(g["start"], g["length"]); break')
fst_items "$img" free-space | awk -v s="$MSTART" -v e="$((MSTART + MLEN))" '$4 == 199 && $3 >= s && $3 < e' > "$T/ext"
# The largest data extent of the block group.
read -r DSTART DLEN < <(fst_items "$img" extent | awk -v s="$MSTART" -v e="$((MSTART + MLEN))" '$4 == 168 && $3 >= s && $3 < e {print $3, $5}' | sort -k2,2n | tail -1)
read -r LEAF SLOT < <(awk -v v="$DSTART" '$3 < v {l=$1; s=$2} END {print l, s}' "$T/ext")
[ -n "$LEAF" ] || skip "no free space extent before data extent $DSTART"
# Every free extent before the data extent shrinks to 4 KiB, the one before it
# becomes the data extent, the ones after it drop below 2 MiB.
awk -v v="$DSTART" '$3 < v' "$T/ext" | while read -r l s o ty off; do rekey "$img" "$l" "$s" "$o" 4096; done
rekey "$img" "$LEAF" "$SLOT" "$DSTART" "$DLEN"
awk -v v="$DSTART" '$3 > v && $5 >= 2097152' "$T/ext" | while read -r l s o ty off; do rekey "$img" "$l" "$s" "$o" 1048576; done
snap "$img"
expect 3 "$FSCTL" convert --bg-tree "$img"
says "$img"
unchanged "$img"
echo "080-attack-fst-overlap: ok"
