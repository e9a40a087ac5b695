#!/usr/bin/env bash
# 066-check: `fsctl check` on a fresh mkfs.btrfs 6.2 image reports its stale
# free space entries as warnings only (exit 0), also after convert --bg-tree
# and back; and it finds a tree block that the free space tree lists as free
# (exit 1), which btrfs check also rejects.
source "$(dirname "$0")/../common/lib.sh"
mkimg "$T/a.img" 512M -n 4096
"$FSCTL" check "$T/a.img" > "$T/c0.txt" || { cat "$T/c0.txt"; fail "check on a fresh image"; }
grep -q "0 errors" "$T/c0.txt" || fail "fresh image: errors reported"
"$FSCTL" -q convert --bg-tree "$T/a.img" >/dev/null
"$FSCTL" check --format json "$T/a.img" > "$T/c1.json" || fail "check after convert --bg-tree"
python3 - "$T/c1.json" <<'PY'
import json,sys
j=json.load(open(sys.argv[1]))
assert j["errors"]==0 and j["bg_tree_state"]["state"]=="block-group-tree", j
assert j["tree_blocks"]>=9
PY
"$FSCTL" -q convert --no-bg-tree "$T/a.img" >/dev/null
"$FSCTL" check "$T/a.img" >/dev/null || fail "check after convert --no-bg-tree"

# Widen a FREE_SPACE_EXTENT of the metadata block group over the allocated
# block right after it (its key offset = length), keeping key order.
read -r LEAF KOFF NEWLEN < <("$FSCTL" inspect dump-tree --format json -t free-space "$T/a.img" | python3 -c '
import json,sys
items=[]
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items",[]): items.append((b["bytenr"], it))
meta=[it["key"]["objectid"] for _,it in items if it["key"]["type_name"]=="FREE_SPACE_INFO" and it["key"]["objectid"]>=30000000]
for i,(leaf,it) in enumerate(items[:-1]):
    k=it["key"]; nk=items[i+1][1]["key"]
    if k["type_name"]=="FREE_SPACE_EXTENT" and meta and k["objectid"]>=meta[0] and nk["type_name"]=="FREE_SPACE_EXTENT" and nk["objectid"]>k["objectid"]+k["offset"]:
        print(leaf, 101+it["slot"]*25+9, k["offset"]+4096); break')
[ -n "$LEAF" ] || skip "no free space extent with an allocated gap after it in the metadata block group"
python3 "$FSCTL_SRC/tests/image/common/btrfs_edit.py" setu64 "$T/a.img" "$LEAF" "$KOFF" "$NEWLEN" >/dev/null
set +e
"$FSCTL" check "$T/a.img" > "$T/c2.txt"; rc=$?
set -e
[ $rc -eq 1 ] || { cat "$T/c2.txt"; fail "check on an image with a tree block listed free: exit $rc, expect 1"; }
grep -q "listed as free" "$T/c2.txt" || fail "check does not say which block is listed free"
echo "ok"
