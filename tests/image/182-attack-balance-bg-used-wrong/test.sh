#!/usr/bin/env bash
# 182-attack-balance-bg-used-wrong: a bug found by attack, fixed: the plan compares each target's used with its tree blocks before anything is written.
# The METADATA block group item's `used` disagrees with its extent items
# (btrfs check: "block group ... used X but extent items used Y"); edited with
# btrfs_edit, checksum fixed. Today `fsctl balance -m` commits the relocation
# of the group and only then notices: "block group ... still has 4096 bytes
# used after relocating its tree blocks" (used one block too high) or "still
# has 18446744073707016192 bytes used" (used 0: the counter underflowed and
# is printed as such), exit 3 with the image written; every rerun writes
# another commit and fails the same way. Expected (fsctl-balance(8)
# REFUSALS, fsctl(8)): the mismatch between `used` and the group's extent
# items is found while planning, before the first write: exit 3, one ERROR
# line naming the image and the block group (30408704-style start), image
# byte-identical.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_root
need_mount

img0="$T/base.img"
mksnapimg "$img0" 600 0 noquota

read -r BGSTART BGLEAF BGOFF USED < <("$FSCTL" inspect dump-tree --format json -t extent "$img0" | python3 -c '
import json, sys
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        if it["key"]["type_name"] == "BLOCK_GROUP_ITEM" and it["data"]["flags_name"].startswith("METADATA"):
            print(it["key"]["objectid"], b["bytenr"], 101 + it["itemoff"], it["data"]["used"])')
[ -n "${USED:-}" ] || fail "no METADATA block group item"

for case in plus:$((USED + 4096)) zero:0; do
  name=${case%%:*} val=${case#*:}
  img="$T/$name.img"
  cp --sparse=always "$img0" "$img"
  $EDIT setu64 "$img" "$BGLEAF" "$BGOFF" "$val" > /dev/null
  snap "$img"
  expect 3 "$FSCTL" balance -m "$img"
  unchanged "$img"
  says "$img" "$BGSTART"
done
echo "182-attack-balance-bg-used-wrong: ok"
