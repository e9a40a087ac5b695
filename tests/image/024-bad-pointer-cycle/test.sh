#!/usr/bin/env bash
# 024-bad-pointer-cycle: a node pointing to itself, a level-1 node pointing
# to its ancestor (the root), and the root pointing to itself (key pointers
# re-checksummed, both DUP copies). Proves: no reader loops or recurses
# forever — the level below a node is always one less, so the cycle is
# caught at the first revisit — with one "ERROR: " line naming the image,
# the bytenr and the level mismatch, exit 3, image unchanged.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
source "$(dirname "$0")/../common/node_image.sh"
make_node_image "$T/base.img"
check_all() {  # IMG TEXT...
  local img=$1; shift
  snap "$img"
  for cmd in "tree-stats" "dump-tree -t fs" "dump-tree" "dump-tree -t 5 --format json"; do
    expect 3 timeout 120 "$FSCTL" inspect $cmd "$img"
    says "$img" "$@"
  done
  unchanged "$img"
}
img="$T/self.img"; cp "$T/base.img" "$img"
$EDIT setptr "$img" "$A" 1 blockptr "$A" >/dev/null
check_all "$img" "tree block $A" "level mismatch, has 1 expect 0"

img="$T/ancestor.img"; cp "$T/base.img" "$img"
$EDIT setptr "$img" "$A" 1 blockptr "$ROOT" >/dev/null
check_all "$img" "tree block $ROOT" "level mismatch, has 2 expect 0"

img="$T/root-self.img"; cp "$T/base.img" "$img"
$EDIT setptr "$img" "$ROOT" 1 blockptr "$ROOT" >/dev/null
check_all "$img" "tree block $ROOT" "level mismatch, has 2 expect 1"
