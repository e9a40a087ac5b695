#!/usr/bin/env bash
# 084-attack-bg-item-fields: a BLOCK_GROUP_ITEM with impossible fields and a
# valid checksum: (a) used > length (2^40 in an 32 MiB metadata block group),
# (b) chunk_objectid 7 instead of 256. The kernel's tree checker rejects both
# ("read time tree block corruption", no mount); btrfs check too. Today fsctl
# convert --bg-tree accepts them, exits 0 and copies the bad item into the
# new block group tree (adding its usage delta to the garbage "used").
# Expected: exit 3, one ERROR line naming the image, the tree block bytenr
# and the bad field; image byte-identical.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"

base="$T/base.img"
mkimg "$base" 256M -n 4096
# leaf and data offset of the metadata block group's item
read -r LEAF OFF < <("$FSCTL" inspect dump-tree --format json -t extent "$base" | python3 -c '
import json,sys
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        if it["key"]["type_name"] == "BLOCK_GROUP_ITEM" and it["data"]["flags"] & 4:
            print(b["bytenr"], 101 + it["itemoff"]); sys.exit()')
[ -n "$LEAF" ] || fail "no metadata BLOCK_GROUP_ITEM"
for case in used chunk_objectid; do
  img="$T/$case.img"
  cp "$base" "$img"
  if [ $case = used ]; then $EDIT setu64 "$img" "$LEAF" "$OFF" $((1 << 40)) >/dev/null
  else $EDIT setu64 "$img" "$LEAF" $((OFF + 8)) 7 >/dev/null; fi
  snap "$img"
  expect 3 "$FSCTL" convert --bg-tree "$img"
  unchanged "$img"
  says "$img" "$LEAF"
done
echo "084-attack-bg-item-fields: ok"
