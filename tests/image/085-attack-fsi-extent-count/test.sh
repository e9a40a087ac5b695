#!/usr/bin/env bash
# 085-attack-fsi-extent-count: the FREE_SPACE_INFO of the metadata block
# group says extent_count 99 while the block group has 4 FREE_SPACE_EXTENT
# items (checksum fixed; btrfs check: "free space info recorded 99 extents,
# counted 4"; the kernel fails with -EIO when it loads that block group's
# free space). Today `fsctl convert --bg-tree` exits 0 and writes, adjusting
# the wrong count by its own deltas (99 -> 101). Expected: the free space of
# a block group is checked against its FREE_SPACE_INFO when it is loaded for
# allocation; exit 3, one ERROR line naming the image and the block group /
# tree block; image byte-identical.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"

img="$T/a.img"
mkimg "$img" 256M -n 4096
read -r LEAF OFF BG < <("$FSCTL" inspect dump-tree --format json -t free-space "$img" | python3 -c '
import json,sys
last = None
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        k = it["key"]
        # the last FREE_SPACE_INFO: mkfs puts the metadata block group last
        if k["type_name"] == "FREE_SPACE_INFO": last = (b["bytenr"], 101 + it["itemoff"], k["objectid"])
print(*last)')
[ -n "$LEAF" ] || fail "no FREE_SPACE_INFO"
$EDIT setu64 "$img" "$LEAF" "$OFF" 99 >/dev/null   # extent_count 99, flags 0
snap "$img"
expect 3 "$FSCTL" convert --bg-tree "$img"
unchanged "$img"
says "$img" "$BG"
echo "085-attack-fsi-extent-count: ok"
