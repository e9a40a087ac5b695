#!/usr/bin/env bash
# 100-chunk-alloc: new chunks made by the transaction engine, automatically
# and explicitly (Transaction::alloc_chunk; issue 4 leftovers). On real
# mkfs.btrfs images, tests/tools/chunk_torture inserts items into the scratch
# tree 200 until the metadata block groups are full and the allocator makes a
# new metadata chunk by itself (4K and 16K nodes; single metadata filled for
# real; dup and a 2-device raid1 with their existing metadata groups excluded
# so that the first allocation needs a chunk; once with the system group
# excluded too, so the chunk tree's copy needs a new SYSTEM chunk), commits,
# re-reads tree 200 against its model, and proves with progs and the kernel:
#  - btrfs check --readonly passes;
#  - dump-tree -t chunk / -t dev: the chunk has the profile's type and stripes
#    (dup: two on devid 1; raid1: devids 1 and 2), one DEV_EXTENT per stripe
#    naming it, a BLOCK_GROUP_ITEM and FREE_SPACE_INFO, SYSTEM chunks in
#    sys_chunk_array; DEV_ITEM bytes_used = the sum of the device's dev
#    extents = each device's superblock dev_item;
#  - the size is the kernel's (1 GiB single: 112 MiB, as kernel 6.18 made on
#    the same image when filled through a mount);
#  - fsctl inspect block-groups lists it (compared with progs' items);
#  - the kernel mounts it read-write and writes files (skipped, saying so,
#    where mount -o loop does not work).
# Also RAID10/RAID0/RAID1C3/RAID1C4 on four devices (RAID1C34 incompat bit)
# and a filesystem with a block group tree (items go into tree 11).
# Then (acceptance 2) alloc_chunk(SYSTEM|DUP) explicitly with the old system
# group excluded (the chunk tree moves into the new chunk, bootstrapped from
# sys_chunk_array) and 45 more metadata chunks, so the chunk tree grows from
# one leaf to a node with several leaves (4K nodes).
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/common/chunklib.sh"

# fill_case NAME "MKFS ARGS" SIZE NDEV TYPE STRIPES DEVIDS FILL-ARGS...
fill_case() {
  local name=$1 mkfs_args=$2 size=$3 ndev=$4 type=$5 stripes=$6 devids=$7; shift 7
  local imgs=() i
  for i in $(seq 1 "$ndev"); do imgs+=("$T/$name.$i.img"); rm -f "$T/$name.$i.img"; truncate -s "$size" "$T/$name.$i.img"; done
  # shellcheck disable=SC2086
  mkfs.btrfs -q -f $mkfs_args "${imgs[@]}" > /dev/null
  "$CT" "${imgs[@]}" fill "$@" > "$T/$name.log" 2>&1 || { cat "$T/$name.log"; fail "$name: chunk_torture fill failed"; }
  grep -h "^txn\|^tree 200" "$T/$name.log" | tail -2 | sed "s/^/$name: /"
  local starts
  starts=$(new_starts "$T/$name.log")
  [ -n "$starts" ] || fail "$name: no new block group"
  check_clean "$name" "${imgs[@]}"
  local meta
  meta=$(grep "^new [0-9]* [0-9]* METADATA" "$T/$name.log" | head -1 | awk '{print $2}')
  [ -n "$meta" ] || fail "$name: no new metadata block group"
  $CC verify-new "${imgs[0]}" "$meta" "$type" "$stripes" "$devids" | sed "s/^/$name: /" || fail "$name: progs' view of the new chunk"
  $CC bytes-used "${imgs[@]}" > /dev/null || fail "$name: bytes_used"
  oracle_compare "$name" --bgs-only "${imgs[@]}" > "$T/$name.oracle" 2>&1 || { cat "$T/$name.oracle"; fail "$name: fsctl inspect block-groups differs from progs"; }
  "$FSCTL" inspect block-groups "${imgs[@]}" | grep_q "^ *$meta " || fail "$name: fsctl inspect block-groups does not list $meta"
  LAST_LOG=$T/$name.log
  LAST_IMGS=("${imgs[@]}")
  kernel_rw "$name" "${imgs[@]}"
}

# 4K nodes, single metadata (mkfs: 8 MiB), filled for real.
fill_case single4k "-n 4096 -m single" 1G 1 "METADATA|single" 1 1 --ops 500 --item-size 1000
len=$(awk '/^new [0-9]* [0-9]* METADATA/ {print $3; exit}' "$LAST_LOG")
[ "$len" = 117440512 ] || fail "single4k: new chunk of $len bytes, expect 117440512 (the kernel's on this image)"
[ "$(grep -c '^txn' "$LAST_LOG")" -gt 1 ] || fail "single4k: the first transaction already needed a chunk (not filled)"
# 16K nodes, single metadata, filled for real.
fill_case single16k "-n 16384 -m single" 1G 1 "METADATA|single" 1 1 --ops 400 --item-size 3000
# 4K nodes, dup metadata (mkfs: 51 MiB): the existing metadata group excluded.
fill_case dup4k "-n 4096 -m dup" 1G 1 "METADATA|DUP" 2 1,1 --ops 300 --exclude metadata --max-transactions 1
# 16K nodes, dup, metadata and system groups excluded: a SYSTEM chunk too.
fill_case dup16k-sys "-n 16384 -m dup" 2G 1 "METADATA|DUP" 2 1,1 --ops 300 --exclude all --max-transactions 1
sys=$(awk '/^new [0-9]* [0-9]* SYSTEM/ {print $2; exit}' "$LAST_LOG")
[ -n "$sys" ] || fail "dup16k-sys: no new SYSTEM chunk"
$CC verify-new "${LAST_IMGS[0]}" "$sys" "SYSTEM|DUP" 2 1,1 | sed "s/^/dup16k-sys: /" || fail "dup16k-sys: the SYSTEM chunk"
cr=$(super_field "${LAST_IMGS[0]}" chunk_root)
[ "$cr" -ge "$sys" ] && [ "$cr" -lt $((sys + 33554432)) ] || fail "dup16k-sys: chunk root $cr is not in the new SYSTEM chunk $sys"
echo "dup16k-sys: the chunk tree root ($cr) lives in the new SYSTEM chunk"
# Two devices, raid1 metadata: one stripe on each device.
fill_case raid1 "-n 16384 -m raid1 -d raid1" 1G 2 "METADATA|RAID1" 2 1,2 --ops 300 --exclude metadata --max-transactions 1

# Four devices: explicit RAID10, RAID0, RAID1C3 and RAID1C4 chunks (the last
# two set the RAID1C34 incompat bit, as the kernel does).
q=()
for i in 1 2 3 4; do q+=("$T/four.$i.img"); rm -f "$T/four.$i.img"; truncate -s 2G "$T/four.$i.img"; done
mkfs.btrfs -q -f -n 16384 -m raid10 -d raid10 "${q[@]}" > /dev/null
(( $(super_field "${q[0]}" incompat_flags) & 0x800 )) && fail "four: RAID1C34 set before any such chunk"
for p in raid10:4 raid0:4 raid1c3:3 raid1c4:4; do
  prof=${p%:*} n=${p#*:}
  "$CT" "${q[@]}" alloc "metadata,$prof" > "$T/four.$prof" 2>&1 || { cat "$T/four.$prof"; fail "four: alloc $prof"; }
  s=$(new_starts "$T/four.$prof")
  cc_on "${q[*]}" verify-new "$s" "METADATA|${prof^^}" "$n" | sed "s/^/four: /" || fail "four: $prof chunk"
done
(( $(super_field "${q[0]}" incompat_flags) & 0x800 )) || fail "four: RAID1C34 incompat bit not set"
check_clean four "${q[@]}"
cc_on "${q[*]}" bytes-used > /dev/null || fail "four: bytes_used"
echo "four: RAID1C34 incompat bit set"
kernel_rw four "${q[@]}"

# A filesystem with a block group tree (fsctl convert --bg-tree): the new
# groups' items go into tree 11, none into the extent tree.
img=$T/bgt.img
mkimg "$img" 1G -n 4096 -m dup
"$FSCTL" -q convert --bg-tree "$img" > /dev/null || fail "bgt: convert --bg-tree"
"$CT" "$img" fill --exclude all --ops 300 --max-transactions 1 > "$T/bgt.log" 2>&1 || { cat "$T/bgt.log"; fail "bgt: fill"; }
check_clean bgt "$img"
for s in $(new_starts "$T/bgt.log"); do
  btrfs inspect-internal dump-tree -t 11 "$img" | grep_q "key ($s BLOCK_GROUP_ITEM" || fail "bgt: no item of $s in the block group tree"
  btrfs inspect-internal dump-tree -t extent "$img" | grep_q "key ($s BLOCK_GROUP_ITEM" && fail "bgt: an item of $s in the extent tree"
done
$CC verify-new "$img" "$(awk '/^new [0-9]* [0-9]* METADATA/ {print $2}' "$T/bgt.log")" "METADATA|DUP" 2 1,1 | sed "s/^/bgt: /" || fail "bgt: metadata chunk"
$CC verify-new "$img" "$(awk '/^new [0-9]* [0-9]* SYSTEM/ {print $2}' "$T/bgt.log")" "SYSTEM|DUP" 2 1,1 | sed "s/^/bgt: /" || fail "bgt: system chunk"
oracle_compare bgt --bgs-only "$img" > "$T/bgt.oracle" 2>&1 || { cat "$T/bgt.oracle"; fail "bgt: fsctl inspect block-groups differs from progs"; }
echo "bgt: the new block group items are in the block group tree"
kernel_rw bgt "$img"

# Acceptance 2: an explicit SYSTEM chunk, then a chunk tree that grows.
img=$T/grow.img
mkimg "$img" 40G -n 4096 -m dup
"$CT" "$img" alloc system,dup --exclude system > "$T/grow1.log" 2>&1 || { cat "$T/grow1.log"; fail "grow: alloc system,dup"; }
sys=$(new_starts "$T/grow1.log")
[ -n "$sys" ] || fail "grow: no new SYSTEM chunk"
check_clean "grow: explicit SYSTEM chunk" "$img"
$CC verify-new "$img" "$sys" "SYSTEM|DUP" 2 1,1 | sed "s/^/grow: /" || fail "grow: the SYSTEM chunk"
$CC sys-array "$img" | grep_q -w "$sys" || fail "grow: sys_chunk_array does not list $sys"
btrfs inspect-internal dump-super -f "$img" | grep_q "CHUNK_ITEM $sys)" || fail "grow: dump-super -f does not list $sys"
cr=$(super_field "$img" chunk_root)
[ "$cr" -ge "$sys" ] && [ "$cr" -lt $((sys + 33554432)) ] || fail "grow: chunk root $cr is not in the new SYSTEM chunk $sys"
echo "grow: dump-super -f lists SYSTEM chunk $sys in sys_chunk_array; the chunk root ($cr) is in it"
level0=$(super_field "$img" chunk_root_level)
"$CT" "$img" alloc metadata,dup --count 45 > "$T/grow2.log" 2>&1 || { cat "$T/grow2.log"; fail "grow: 45 metadata chunks"; }
[ "$(new_starts "$T/grow2.log" | wc -l)" = 45 ] || fail "grow: expected 45 new block groups"
level1=$(super_field "$img" chunk_root_level)
leaves=$(btrfs inspect-internal dump-tree -t chunk "$img" | grep -c "^leaf .* items")
[ "$level1" -gt "$level0" ] && [ "$leaves" -ge 2 ] || fail "grow: chunk tree level $level0 -> $level1, $leaves leaves: it did not grow"
echo "grow: chunk tree grew from level $level0 to level $level1 ($leaves leaves, $($CC chunks "$img" | wc -l) chunks)"
check_clean "grow: 45 metadata chunks" "$img"
for s in $(new_starts "$T/grow2.log" | sed -n '1p;$p'); do $CC verify-new "$img" "$s" "METADATA|DUP" 2 1,1 > /dev/null || fail "grow: chunk $s"; done
$CC bytes-used "$img" > /dev/null || fail "grow: bytes_used"
oracle_compare grow --bgs-only "$img" > "$T/grow.oracle" 2>&1 || { cat "$T/grow.oracle"; fail "grow: fsctl inspect block-groups differs from progs"; }
kernel_rw grow "$img"
echo ok
