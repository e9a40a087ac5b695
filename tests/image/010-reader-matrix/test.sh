#!/usr/bin/env bash
# 010-reader-matrix: fsctl reads every mkfs.btrfs layout like btrfs-progs does.
# For nodesize {4K,16K,64K} x csum {crc32c,xxhash,sha256,blake2} x metadata
# {single,dup} (24 images; one per nodesize filled through a loop mount until
# the fs and extent trees have level >= 1, one also with subvolumes,
# snapshots and quota), it proves, against btrfs inspect-internal:
#  (a) dump-super: every field both print, in every superblock copy;
#  (b) dump-tree: every tree, its blocks in DFS order (bytenr, level, nritems,
#      generation, owner) and every key of every leaf and node pointer;
#  (c) block-groups: start, length, used, flags, chunk_objectid and item tree
#      of every BLOCK_GROUP_ITEM progs lists from the extent tree.
# Plus three images with all three superblock copies, metadata_uuid != fsid
# and a non-ASCII label, and the SEEDING flag.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/oracle.sh"
trap oracle_cleanup EXIT
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs not installed"

# Filled images: "nodesize csum meta" -> "NFILES EXTRA"
declare -A FILL=(
  ["4096 crc32c single"]="2500 -"
  ["4096 sha256 dup"]="600 extra"
  ["16384 xxhash dup"]="3000 extra"
  ["65536 blake2 dup"]="5000 -"
)
fails=()
start=$SECONDS
for ns in 4096 16384 65536; do
  for csum in crc32c xxhash sha256 blake2; do
    for meta in single dup; do
      name="n$ns-$csum-$meta"
      img="$T/$name.img"
      args=(-n "$ns" --csum "$csum" -m "$meta" -d single)
      fill=${FILL["$ns $csum $meta"]:-}
      min=()
      if [ -n "$fill" ]; then
        mkimg_filled "$img" 512M ${fill% *} ${fill#* } "${args[@]}"
        min=(--min-level 1)
      else
        mkimg "$img" 256M "${args[@]}"
      fi
      oracle_compare "$name" "${min[@]}" "$img" || fails+=("$name")
      rm -f "$img"
    done
  done
done
# Beyond the matrix: all three superblock copies (a 260 GiB sparse image);
# metadata_uuid != fsid (btrfstune -M: new fsid, tree blocks keep the old one)
# with a non-ASCII label; a seeding filesystem (super flag SEEDING).
mkimg "$T/three-copies.img" 260G -n 16384 --csum xxhash
oracle_compare three-copies "$T/three-copies.img" || fails+=(three-copies)
rm -f "$T/three-copies.img"
mkimg "$T/metadata-uuid.img" 256M -n 4096 --csum sha256 -L "étiquette label 標籤"
btrfstune -f -M 0b1f5ad5-0000-4000-8000-00000000f5c7 "$T/metadata-uuid.img" > /dev/null
oracle_compare metadata-uuid "$T/metadata-uuid.img" || fails+=(metadata-uuid)
python3 - "$T/oracle-metadata-uuid/fsctl.super.json" <<'PY' || fails+=(metadata-uuid-fields)
import json, sys
sb = json.load(open(sys.argv[1]))["devices"][0]["copies"][0]["superblock"]
# -M gives the fsid a new value; tree blocks keep the old one, now metadata_uuid
assert sb["fsid"] == "0b1f5ad5-0000-4000-8000-00000000f5c7" != sb["metadata_uuid"], (sb["fsid"], sb["metadata_uuid"])
assert sb["incompat_flags"] & 0x400, "METADATA_UUID incompat bit"
assert sb["label"] == "étiquette label 標籤", sb["label"]
PY
mkimg "$T/seed.img" 256M -n 65536 --csum blake2
btrfstune -S 1 "$T/seed.img"
oracle_compare seed "$T/seed.img" || fails+=(seed)
rm -f "$T/metadata-uuid.img" "$T/seed.img"
echo "24 + 3 images in $((SECONDS - start)) s"
[ ${#fails[@]} -eq 0 ] || fail "fsctl differs from btrfs-progs on: ${fails[*]}"
echo "ok"
