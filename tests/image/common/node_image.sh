# SPDX-License-Identifier: GPL-2.0-only
# make_node_image IMG: a 256 MiB crc32c image, nodesize 4096, DUP metadata,
# whose fs tree has height 3 (3000 empty files via mkfs --rootdir, no mount).
# Sets ROOT (fs tree root, level 2), A and B (its first two level-1 children),
# GEN (their pointer generation). Used by the tree-pointer bad-input tests.
make_node_image() {
  local img=$1 dir="$T/rootdir"
  rm -rf "$dir"; mkdir -p "$dir"
  (cd "$dir" && for i in $(seq 1 3000); do : > "f$i"; done)
  mkimg "$img" 256M -n 4096 -m dup -r "$dir"
  local level
  read -r ROOT level _ < <($EDIT blocks "$img" fs | head -1)
  [ "$level" -eq 2 ] || fail "fs tree root has level $level, expect 2"
  { read -r _ A GEN; read -r _ B _; } < <($EDIT ptrs "$img" "$ROOT")
}
