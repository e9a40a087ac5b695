#!/usr/bin/env bash
# 011-reader-fixtures: fsctl reads every image of ../shared/fixtures (made by
# the 6.18 kernel and btrfs-progs 6.2: DUP/single/RAID1 over 2 devices, mixed
# block groups, quota, many block groups, space cache v1, no skinny metadata,
# sha256/xxhash/blake2) exactly as btrfs inspect-internal does:
#  (a) dump-super, every field of every copy of every device;
#  (b) dump-tree, every tree's blocks and keys in DFS order;
#  (c) block-groups, against progs' BLOCK_GROUP_ITEMs and the fixture JSON's
#      block_groups.list.
# The 2-device raid1 image is opened with both files. Skips when the fixtures
# are absent (a fresh clone without ../shared).
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/oracle.sh"
FX=$SHARED/fixtures
[ -f "$FX/MANIFEST.json" ] || skip "no fixtures at $FX (they live beside the repo in ../shared)"

fails=()
n=0
start=$SECONDS
for js in "$FX"/*.json; do
  [ "$(basename "$js")" = MANIFEST.json ] && continue
  name=$(basename "$js" .json)
  mapfile -t parts < <(python3 -c 'import json,sys; [print(f["compressed"]) for f in json.load(open(sys.argv[1]))["image_files"]]' "$js")
  imgs=()
  for z in "${parts[@]}"; do
    unpack_fixture "$FX/$z" "$T/${z%.zst}" || fail "$name: $z listed in its JSON but missing"
    imgs+=("$T/${z%.zst}")
  done
  oracle_compare "$name" --fixture "$js" "${imgs[@]}" || fails+=("$name")
  rm -f "${imgs[@]}"
  n=$((n + 1))
done
echo "$n fixtures in $((SECONDS - start)) s"
[ $n -gt 0 ] || fail "no fixture JSON found in $FX"
[ ${#fails[@]} -eq 0 ] || fail "fsctl differs from btrfs-progs on: ${fails[*]}"
echo ok
