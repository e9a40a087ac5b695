#!/usr/bin/env bash
# 086-attack-fst-overlap-crash: the last (largest) FREE_SPACE_EXTENT of the
# metadata block group is re-keyed to start two tree blocks earlier, over the
# last FS tree leaf and the root tree leaf (checksum fixed). Today `fsctl
# convert --bg-tree` allocates its first blocks there and crashes in the
# B-tree code: "lib/ctree/write.cpp:236:25: runtime error: member access
# within null pointer" under UBSan (exit 1, no ERROR line; a null dereference
# in a release build). Expected: no crash; exit 3, one ERROR line naming the
# image and the overlapping free space extent / tree block; image unchanged.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"

mkdir -p "$T/src/d"
python3 - "$T/src" <<'PY'
import os, random, sys
r = random.Random(80)
for i in range(1, 51):
    open(os.path.join(sys.argv[1], f"f{i}"), "wb").write(bytes(r.getrandbits(8) for _ in range(r.randrange(1, 98304))))
for i in range(1, 201):
    open(os.path.join(sys.argv[1], "d", f"s{i}"), "w").write(f"{i}\n")
PY
img="$T/a.img"
mkimg "$img" 512M -n 4096 -r "$T/src"
read -r LEAF SLOT START LEN < <("$FSCTL" inspect dump-tree --format json -t free-space "$img" | python3 -c '
import json,sys
last = None
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        k = it["key"]
        if k["type_name"] == "FREE_SPACE_EXTENT": last = (b["bytenr"], it["slot"], k["objectid"], k["offset"])
print(*last)')
$EDIT setu64 "$img" "$LEAF" $((101 + 25 * SLOT)) $((START - 8192)) >/dev/null
$EDIT setu64 "$img" "$LEAF" $((101 + 25 * SLOT + 9)) $((LEN + 8192)) >/dev/null
snap "$img"
expect 3 "$FSCTL" convert --bg-tree "$img"
unchanged "$img"
says "$img"
echo "086-attack-fst-overlap-crash: ok"
