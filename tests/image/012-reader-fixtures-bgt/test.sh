#!/usr/bin/env bash
# 012-reader-fixtures-bgt: fsctl reads the block-group-tree fixtures of
# ../shared/fixtures-bgt like btrfs-progs 6.2 does, and finds every block
# group in the tree the fixture JSON says holds its item.
#  - bgt-native-16k, bgt-converted-4k, bgt-source-4k, many-qgroups-16k (704
#    qgroups, 700 subvolumes): dump-super, dump-tree (every tree incl. tree 11)
#    and block-groups vs progs and the JSON's block_groups.list;
#  - half-to-bgt, half-from-bgt, progs-half-converted-bgt (interrupted
#    conversions, both directions): block-groups only (start, length, used,
#    flags, item tree; per-tree counts = bg_tree_state), vs progs' items and
#    the JSON.
# The *-4k images are 260 GiB sparse files that take a minute each to unpack
# in full; all their metadata chunks lie in the first GiBs (computed from the
# JSON's chunk list), so only that prefix is unpacked into a sparse file of the
# full size. Their third superblock copy (at 256 GiB) is then zeros: both tools
# must reject it (010 compares a valid 3-copy image), fsctl with a warning.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/oracle.sh"
FX=$SHARED/fixtures-bgt
[ -f "$FX/MANIFEST.json" ] || skip "no fixtures at $FX (they live beside the repo in ../shared)"

# unpack_meta NAME DEST: the whole image when small, else the GiBs that hold
# every SYSTEM/METADATA chunk stripe, in a sparse file of the image's size.
unpack_meta() {
  local name=$1 dest=$2
  read -r size need < <(python3 - "$FX/$name.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
end = 0
for c in j["chunks"]["list"]:
    if c["type"].split("|")[0] != "DATA":
        for s in c["stripes"]:
            end = max(end, s["offset"] + c["length"])
print(j["image_files"][0]["size"], (end >> 30) + 1)
PY
)
  if [ "$size" -le $((8 << 30)) ]; then
    unpack_fixture "$FX/$name.img.zst" "$dest"
    return
  fi
  rm -f "$dest"
  # zstd stops on the closed pipe once dd has its prefix; dd keeps holes.
  { zstd -q -dc "$FX/$name.img.zst" 2>/dev/null || true; } |
    dd of="$dest" bs=1M count=$((need << 10)) iflag=fullblock conv=sparse status=none
  truncate -s "$size" "$dest"
}

fails=()
start=$SECONDS
for name in bgt-native-16k many-qgroups-16k bgt-converted-4k bgt-source-4k; do
  [ -f "$FX/$name.img.zst" ] || { echo "NOTE: $name absent, not checked"; continue; }
  unpack_meta "$name" "$T/$name.img"
  oracle_compare "$name" --fixture "$FX/$name.json" "$T/$name.img" || fails+=("$name")
  rm -f "$T/$name.img"
done
for name in half-to-bgt half-from-bgt; do
  [ -f "$FX/$name.img.zst" ] || { echo "NOTE: $name absent, not checked"; continue; }
  unpack_meta "$name" "$T/$name.img"
  oracle_compare "$name" --bgs-only --fixture "$FX/$name.json" "$T/$name.img" || fails+=("$name")
  rm -f "$T/$name.img"
done
if [ -f "$FX/progs-half-converted-bgt.raw.xz" ]; then
  xz -dc "$FX/progs-half-converted-bgt.raw.xz" > "$T/progs-half.img"
  oracle_compare progs-half-converted-bgt --bgs-only --fixture "$FX/progs-half-converted-bgt.json" "$T/progs-half.img" ||
    fails+=(progs-half-converted-bgt)
  rm -f "$T/progs-half.img"
fi
echo "bgt fixtures in $((SECONDS - start)) s"
[ ${#fails[@]} -eq 0 ] || fail "fsctl differs from btrfs-progs or the fixture JSON on: ${fails[*]}"
echo ok
