#!/usr/bin/env bash
# 081-attack-refusal-after-commit: a shared-looking tree block (its
# METADATA_ITEM says refs 2, checksum fixed) is found by convert only when a
# batch copies it, after the first commit already set CHANGING_BG_TREE in the
# superblock. Today `convert --no-bg-tree` exits 4 ("is shared or has other
# references ... not supported") but has written that commit: the image
# changed, the superblock carries CHANGING_BG_TREE and the kernel refuses to
# mount it ("unrecognized or unsupported super flag 0x4000000000"), and every
# rerun fails the same way — a mountable filesystem turned unmountable by a
# refusal. Same with `--bg-tree --batch 1` on a filesystem with many block
# groups. Expected (fsctl-convert(8) REFUSALS, fsctl(8)): every refusal is
# found before the first write; exit 4, one ERROR line naming the image and
# the block, image byte-identical, still mountable.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_root

mkdir -p "$T/src"
for i in $(seq 1 200); do echo "$i" > "$T/src/s$i"; done
img="$T/a.img"
mkimg "$img" 256M -n 4096 -r "$T/src"
"$FSCTL" -q convert --bg-tree "$img" >/dev/null || fail "convert --bg-tree on a fresh image"
BGT=$("$FSCTL" inspect dump-tree --format json -t block-group "$img" | python3 -c '
import json,sys; print(json.load(sys.stdin)["trees"][0]["blocks"][0]["bytenr"])')
read -r LEAF OFF < <("$FSCTL" inspect dump-tree --format json -t extent "$img" | python3 -c '
import json,sys
bgt = int(sys.argv[1])
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        k = it["key"]
        if k["objectid"] == bgt and k["type_name"] == "METADATA_ITEM":
            print(b["bytenr"], 101 + it["itemoff"])' "$BGT")
[ -n "$LEAF" ] || fail "no METADATA_ITEM for the block group tree leaf $BGT"
$EDIT setu64 "$img" "$LEAF" "$OFF" 2 >/dev/null   # refs 2
snap "$img"
expect 4 "$FSCTL" convert --no-bg-tree "$img"
unchanged "$img"
state=$("$FSCTL" inspect block-groups --format json "$img" | python3 -c 'import json,sys; print(json.load(sys.stdin)["bg_tree_state"]["state"])')
[ "$state" = block-group-tree ] || fail "state after the refusal: $state"
says "$img" "$BGT"
echo "081-attack-refusal-after-commit: ok"
