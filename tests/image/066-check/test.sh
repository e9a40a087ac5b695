#!/usr/bin/env bash
# 066-check: `fsctl check` on a fresh mkfs.btrfs 6.2 image folds its stale
# free space entries into one NOTE (no warning: btrfs check says "no error
# found"; exit 0), also after convert --bg-tree and back; it finds a tree
# block that the free space tree lists as free (exit 1), which btrfs check
# also rejects. It carries on past damage: a damaged DUP copy is read from
# the other mirror and counted (bad_copies, exit 0); a tree block no mirror
# can give (both DUP copies of the fs tree's root leaf damaged) is an error
# naming the tree, that tree counts in trees_incomplete, every other tree is
# still checked (exit 1, not 3).
source "$(dirname "$0")/../common/lib.sh"
mkimg "$T/a.img" 512M -n 4096
"$FSCTL" check "$T/a.img" > "$T/c0.txt" || { cat "$T/c0.txt"; fail "check on a fresh image"; }
grep -q "0 errors" "$T/c0.txt" || fail "fresh image: errors reported"
grep -q "WARNING" "$T/c0.txt" && { cat "$T/c0.txt"; fail "fresh image: warnings reported"; }
[ "$(grep -c "^NOTE: " "$T/c0.txt")" -le 1 ] || { cat "$T/c0.txt"; fail "fresh image: more than one NOTE"; }
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

# Damage: one copy, then both copies of the fs tree's root leaf (DUP).
EDIT="python3 $FSCTL_SRC/tests/image/common/btrfs_edit.py"
mkimg "$T/d.img" 256M -m dup
read -r bytenr _ < <($EDIT blocks "$T/d.img" fs | head -1)
read -r -a phys < <($EDIT phys "$T/d.img" "$bytenr")
printf '\xff' | dd of="$T/d.img" bs=1 seek=$((phys[0] + 300)) conv=notrunc status=none
"$FSCTL" --format json check "$T/d.img" > "$T/d1.json" 2> "$T/d1.err" || { cat "$T/d1.err"; fail "check with one damaged copy"; }
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["bad_copies"]==1 and j["errors"]==0 and j["trees_incomplete"]==0, j' "$T/d1.json" ||
  fail "one damaged copy: bad_copies 1, no error"
printf '\xff' | dd of="$T/d.img" bs=1 seek=$((phys[1] + 300)) conv=notrunc status=none
set +e
"$FSCTL" --format json check "$T/d.img" > "$T/d2.json" 2> "$T/d2.err"; rc=$?
set -e
[ $rc -eq 1 ] || { cat "$T/d2.err" "$T/d2.json"; fail "both copies damaged: exit $rc, expect 1 (carry on)"; }
python3 - "$T/d2.json" "$bytenr" <<'PY' || fail "both copies damaged: report"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["trees_incomplete"] == 1 and j["errors"] >= 1, j
assert any("tree FS_TREE" in p["message"] and sys.argv[2] in p["message"] for p in j["problems"]), j["problems"]
assert j["tree_blocks"] >= 5, j  # the root, chunk, extent, dev, csum, free space trees were still walked
PY
echo "ok"
