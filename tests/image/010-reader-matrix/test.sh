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
echo "24 images in $((SECONDS - start)) s"
[ ${#fails[@]} -eq 0 ] || fail "fsctl differs from btrfs-progs on: ${fails[*]}"
echo "ok"
