#!/usr/bin/env bash
# 180-attack-balance: damaged or odd inputs that `fsctl balance -m` handles
# correctly today, kept so they stay correct. Each refusal: the documented exit
# code, one ERROR line naming the image and the block, image byte-identical.
#  - a device of a 2-device filesystem missing (exit 3, "missing device");
#  - a truncated image (exit 3, "truncated image");
#  - a child pointer generation changed (exit 3, parent transid);
#  - a ROOT_ITEM pointing at a bytenr that holds no tree block (exit 3);
#  - a global (csum) tree leaf without its extent item (exit 3, its bytenr);
#  - bad filters / --batch out of range (exit 2);
#  - --dry-run writes nothing; a real balance, then a second one, both pass
#    btrfs check --readonly --qgroup-report.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_root
need_mount
export FSCTL_SRC

img0="$T/base.img"
mksnapimg "$img0" 800 50
c() { cp --sparse=always "$img0" "$T/$1.img"; echo "$T/$1.img"; }

# Missing device of a 2-device filesystem.
truncate -s 512M "$T/d1.img" "$T/d2.img"
mkfs.btrfs -q -f -n 4096 -m raid1 -d single "$T/d1.img" "$T/d2.img" > /dev/null
snap "$T/d1.img"
expect 3 "$FSCTL" balance -m "$T/d1.img"
unchanged "$T/d1.img"; says "$T/d1.img" "missing device"

# Truncated.
i=$(c trunc); truncate -s 600M "$i"; snap "$i"
expect 3 "$FSCTL" balance -m "$i"; unchanged "$i"; says "$i" "truncated"

# Child pointer generation of subvolume 256's root node.
ROOT=$($EDIT blocks "$img0" 256 | awk 'NR==1{print $1}')
i=$(c ptrgen); $EDIT setptr "$i" "$ROOT" 1 generation 5 > /dev/null; snap "$i"
expect 3 "$FSCTL" balance -m "$i"; unchanged "$i"; says "$i" "transid"

# ROOT_ITEM of the snapshot (257) pointing at a bytenr with no tree block.
read -r RL RO < <("$FSCTL" inspect dump-tree --format json -t root "$img0" | python3 -c '
import json, sys
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        if it["key"]["type_name"] == "ROOT_ITEM" and it["key"]["objectid"] == 257:
            print(b["bytenr"], 101 + it["itemoff"] + 176)')
i=$(c rootptr); $EDIT setu64 "$i" "$RL" "$RO" 30003200 > /dev/null; snap "$i"
expect 3 "$FSCTL" balance -m "$i"; unchanged "$i"; says "$i" 30003200

# A csum tree leaf whose METADATA_ITEM is gone (key type 169 -> 176).
CS=$($EDIT blocks "$img0" csum | awk 'NR==1{print $1}')
read -r EL SL < <("$FSCTL" inspect dump-tree --format json -t extent "$img0" | python3 -c '
import json, sys
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        if it["key"]["objectid"] == int(sys.argv[1]) and it["key"]["type_name"] == "METADATA_ITEM":
            print(b["bytenr"], it["slot"])' "$CS")
i=$(c globalmi)
python3 - "$i" "$EL" "$SL" > /dev/null <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["FSCTL_SRC"], "tests/image/common"))
import btrfs_edit as E
def fn(b): b[101 + int(sys.argv[3]) * 25 + 8] = 176
E.edit_block(sys.argv[1], int(sys.argv[2]), fn, True)
PY
snap "$i"
expect 3 "$FSCTL" balance -m "$i"; unchanged "$i"; says "$i" "$CS" "no extent item"

# Arguments.
i=$(c args); snap "$i"
for a in -mlimit=5..2 -mvrange=100..0 -mdevid=0 -musage=50..10 -mprofiles=foo; do
  expect 2 "$FSCTL" balance "$a" "$i"; says "balance filter"
done
for n in 0 -1 abc 1048577; do
  rc=0; "$FSCTL" balance -m --batch "$n" "$i" > /dev/null 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || fail "--batch $n: exit $rc, expect 2"
done
expect 0 "$FSCTL" balance -m --dry-run "$i"
unchanged "$i"

# Real balance, twice, with checks.
i=$(c real)
for run in 1 2; do
  expect 0 "$FSCTL" balance -m --batch 2 "$i"
  btrfs check --readonly --qgroup-report "$i" > "$T/check$run" 2>&1 || { cat "$T/check$run"; fail "btrfs check after run $run"; }
done
echo "180-attack-balance: ok"
