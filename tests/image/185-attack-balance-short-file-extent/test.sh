#!/usr/bin/env bash
# 185-attack-balance-short-file-extent: a regular file extent item cut to 45
# of its 53 bytes (checksum fixed) in a FULL_BACKREF leaf, a leaf a snapshot
# still shares after its owner changed files (its data extents are
# referenced by the leaf's bytenr: SHARED_DATA_REF). Found while moving item
# decoding into lib/format (issue 11): relocation skipped such an item
# silently where qgroup accounting called it corrupt, so `balance -m` moved
# the leaf and left the SHARED_DATA_REF of its data extent naming the old,
# freed bytenr (exit 0). Expected now, as for every short item
# (lib/format/file_extent.h, the kernel's tree-checker rule): corrupt
# metadata found before the first write, exit 3, one ERROR line naming the
# image, the leaf and the short item, image byte-identical.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_root
need_mount

img="$T/fb.img"
m="$T/mnt"
mkimg "$img" 1G -n 4096
mkdir -p "$m"
trap 'release_all "$m"' EXIT
mount -o loop "$img" "$m"
btrfs subvolume create "$m/sv" > /dev/null
for i in $(seq 1 600); do head -c $((4096 + i % 5 * 1000)) /dev/urandom > "$m/sv/f$i"; done
btrfs subvolume snapshot "$m/sv" "$m/snap" > /dev/null
sync
# The owner rewrites some files: the leaves it copies stay shared by the
# snapshot with FULL_BACKREF (kernel update_ref_for_cow).
for i in $(seq 25 25 600); do echo x >> "$m/sv/f$i"; done
umount "$m"

# A FULL_BACKREF leaf of the snapshot (257) and the slot of a regular file
# extent with a data extent in it.
read -r LEAF SLOT < <(python3 - "$img" <<'PY'
import json, subprocess, os, sys
img = sys.argv[1]
def dump(t):
    return json.loads(subprocess.run([os.environ["FSCTL"], "inspect", "dump-tree", "--format", "json", "-t", t, img],
                                     check=True, capture_output=True, text=True).stdout)["trees"][0]["blocks"]
fb = {it["key"]["objectid"] for b in dump("extent") for it in b.get("items", [])
      if it["key"]["type_name"] == "METADATA_ITEM" and it["key"]["offset"] == 0 and it["data"]["flags"] & 256}
for b in dump("257"):
    if b["level"] == 0 and b["bytenr"] in fb:
        for it in b.get("items", []):
            if it["key"]["type_name"] == "EXTENT_DATA" and it["data"].get("type") == 1 and it["data"]["disk_bytenr"]:
                print(b["bytenr"], it["slot"])
                sys.exit()
PY
)
[ -n "${SLOT:-}" ] || fail "no FULL_BACKREF leaf with a regular file extent"
$EDIT shrink "$img" "$LEAF" "$SLOT" 8 > /dev/null
snap "$img"
expect 3 "$FSCTL" balance -m "$img"
unchanged "$img"
says "$img" "tree block $LEAF slot $SLOT" "regular file extent item of 45 bytes"
echo "185-attack-balance-short-file-extent: ok"
