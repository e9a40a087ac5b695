#!/usr/bin/env bash
# 023-bad-tree-pointer: a node's key pointer (re-checksummed, both DUP
# copies) gives the wrong generation, points at a block of the wrong level,
# at a logical address no chunk maps, or at an unaligned address. Proves:
# each whole-tree reader (streaming tree-stats, depth-first dump-tree) stops
# with one "ERROR: " line naming the image, the bytenr pointed at and what is
# wrong ("has X expect Y"), exit 3, no crash, image unchanged.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
source "$(dirname "$0")/../common/node_image.sh"
make_node_image "$T/base.img"
check_all() {  # IMG TEXT...
  local img=$1; shift
  snap "$img"
  for cmd in "tree-stats" "dump-tree -t fs" "dump-tree"; do
    expect 3 "$FSCTL" inspect $cmd "$img"
    says "$img" "$@"
  done
  unchanged "$img"
}
img="$T/gen.img"; cp "$T/base.img" "$img"
$EDIT setptr "$img" "$ROOT" 0 generation $((GEN + 1)) >/dev/null
check_all "$img" "tree block $A" "parent transid verify failed, has $GEN expect $((GEN + 1))"

img="$T/level.img"; cp "$T/base.img" "$img"
$EDIT setptr "$img" "$A" 0 blockptr "$B" >/dev/null
check_all "$img" "tree block $B" "level mismatch, has 1 expect 0"

img="$T/unmapped.img"; cp "$T/base.img" "$img"
$EDIT setptr "$img" "$A" 0 blockptr 1099511627776 >/dev/null
check_all "$img" "tree block 1099511627776" "not mapped by any chunk"

img="$T/unaligned.img"; cp "$T/base.img" "$img"
$EDIT setptr "$img" "$A" 0 blockptr $((B + 512)) >/dev/null
check_all "$img" "tree block $((B + 512))" "not aligned to sectorsize 4096"
