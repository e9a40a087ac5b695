#!/usr/bin/env bash
# 101-chunk-remove: Transaction::remove_block_group on empty block groups and
# the refusals of chunk allocation and removal (issue 4 leftovers).
# Removal (acceptance 3): on a 4K single-metadata image, an empty DUP metadata
# chunk and an empty SYSTEM chunk made by alloc_chunk (kept empty by
# excluding them from allocation) are removed in one later transaction:
#  - btrfs check --readonly passes (and fsctl check);
#  - progs shows no chunk item, sys_chunk_array entry (dump-super -f), dev
#    extent, block group item or free space item of their ranges;
#  - DEV_ITEM bytes_used (chunk tree and superblock dev_item) went down by
#    exactly their stripes: 2 x the DUP stripe + 2 x the SYSTEM DUP stripe;
#  - fsctl inspect block-groups agrees with progs; the kernel mounts it
#    read-write and writes files; the next chunk reuses the removed logical
#    range (it is after the highest chunk left), and check stays clean.
# The same on a 2-device raid1 image (one stripe per device goes), and on a
# filesystem with a block group tree.
# Refusals (acceptance 5), each exit code checked and the image byte-identical
# (lib.sh img_sum) afterwards: alloc_chunk with no unallocated space left (ENOSPC,
# after allocating chunks until the devices are full), RAID1 on one device
# (ENOSPC), a SYSTEM chunk that no longer fits sys_chunk_array (ENOSPC), a
# DATA chunk (unsupported); removing a block group that is not empty (the
# metadata chunk the allocator made while tree 200 was filled, still holding
# global tree blocks after tree 200 is deleted), a start that is no block
# group, and a chunk in the transaction that created it.
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/common/chunklib.sh"

used_of() { $CC bytes-used "$@" | awk -v d="$DEVID" '$1 == d {print $2}'; }
fsctl_check() { "$FSCTL" check "$@" > "$T/fsctl-check.log" 2>&1 || { cat "$T/fsctl-check.log"; fail "fsctl check: $*"; }; }

# remove_case NAME NDEV "MKFS ARGS" META-FLAGS META-STRIPES
remove_case() {
  local name=$1 ndev=$2 mkfs_args=$3 mflags=$4 mstripes=$5
  local imgs=() i
  for i in $(seq 1 "$ndev"); do imgs+=("$T/$name.$i.img"); rm -f "$T/$name.$i.img"; truncate -s 2G "$T/$name.$i.img"; done
  # shellcheck disable=SC2086
  mkfs.btrfs -q -f $mkfs_args "${imgs[@]}" > /dev/null
  "$CT" "${imgs[@]}" alloc "$mflags" --keep-empty > "$T/$name.a1" 2>&1 || { cat "$T/$name.a1"; fail "$name: alloc $mflags"; }
  "$CT" "${imgs[@]}" alloc system,"${mflags#*,}" --keep-empty > "$T/$name.a2" 2>&1 || { cat "$T/$name.a2"; fail "$name: alloc system"; }
  local meta sys
  meta=$(new_starts "$T/$name.a1"); sys=$(new_starts "$T/$name.a2")
  local mlen slen mstripe sstripe
  mlen=$(awk '/^new/ {print $3}' "$T/$name.a1"); slen=$(awk '/^new/ {print $3}' "$T/$name.a2")
  check_clean "$name: after alloc" "${imgs[@]}"
  $CC sys-array "${imgs[0]}" | grep_q -w "$sys" || fail "$name: sys_chunk_array lacks $sys"
  mstripe=$($CC verify-new "${imgs[0]}" "$meta" "$(awk '/^new/ {print $4}' "$T/$name.a1" | sed 's/^METADATA$/METADATA|single/')" "$mstripes" | sed -n 's/.*stripes of \([0-9]*\) bytes.*/\1/p')
  sstripe=$($CC verify-new "${imgs[0]}" "$sys" "$(awk '/^new/ {print $4}' "$T/$name.a2" | sed 's/^SYSTEM$/SYSTEM|single/')" "$mstripes" | sed -n 's/.*stripes of \([0-9]*\) bytes.*/\1/p')
  [ -n "$mstripe" ] && [ -n "$sstripe" ] || fail "$name: new chunks not as expected"
  "$FSCTL" inspect block-groups "${imgs[@]}" | awk -v m="$meta" -v s="$sys" '$1 == m || $1 == s {if ($3 != 0) exit 1}' || fail "$name: new groups not empty"
  declare -A before
  while read -r d u; do before[$d]=$u; done < <($CC bytes-used "${imgs[@]}")
  "$CT" "${imgs[@]}" remove "$meta" "$sys" > "$T/$name.rm" 2>&1 || { cat "$T/$name.rm"; fail "$name: remove"; }
  [ "$(grep -c '^removed' "$T/$name.rm")" = 2 ] || fail "$name: the tool did not report two removed groups"
  check_clean "$name: after remove" "${imgs[@]}"
  fsctl_check "${imgs[@]}"
  $CC verify-gone "${imgs[0]}" "$meta" "$mlen" | sed "s/^/$name: /" || fail "$name: metadata chunk $meta left traces"
  $CC verify-gone "${imgs[0]}" "$sys" "$slen" | sed "s/^/$name: /" || fail "$name: system chunk $sys left traces"
  btrfs inspect-internal dump-super -f "${imgs[0]}" | grep_q "CHUNK_ITEM $sys)" && fail "$name: dump-super -f still lists $sys"
  # bytes_used went down by each device's stripes of the two chunks.
  local per_dev_m=$((mstripe * mstripes / ndev)) per_dev_s=$((sstripe * mstripes / ndev))
  while read -r d u; do
    [ "$u" = $((before[$d] - per_dev_m - per_dev_s)) ] ||
      fail "$name: devid $d bytes_used $u, expect ${before[$d]} - $per_dev_m - $per_dev_s"
    echo "$name: devid $d bytes_used ${before[$d]} -> $u (-$per_dev_m metadata, -$per_dev_s system)"
  done < <($CC bytes-used "${imgs[@]}")
  oracle_compare "$name" --bgs-only "${imgs[@]}" > "$T/$name.oracle" 2>&1 || { cat "$T/$name.oracle"; fail "$name: fsctl inspect block-groups differs from progs"; }
  kernel_rw "$name" "${imgs[@]}"
  # The next chunk goes after the highest chunk left (kernel
  # find_next_chunk): the logical range of the removed ones, which were the
  # highest, is used again once their removal is committed, unless the
  # kernel's writes above allocated a chunk of their own there (seen in a
  # CI run): then after that one.
  local top
  top=$("$FSCTL" inspect block-groups "${imgs[@]}" | awk '$1 ~ /^[0-9]+$/ && $1 + $2 > m { m = $1 + $2 } END { print m + 0 }')
  [ "$top" -ge "$meta" ] || fail "$name: the highest chunk ends at $top, below the removed one at $meta"
  "$CT" "${imgs[@]}" alloc "$mflags" > "$T/$name.a3" 2>&1 || { cat "$T/$name.a3"; fail "$name: alloc after remove"; }
  local again
  again=$(new_starts "$T/$name.a3")
  [ "$again" = "$top" ] || fail "$name: the next chunk is at $again, expect $top (after the highest chunk left; removed: $meta)"
  check_clean "$name: alloc after remove" "${imgs[@]}"
  $CC bytes-used "${imgs[@]}" > /dev/null || fail "$name: bytes_used after the next chunk"
  echo "$name: the next chunk reuses logical $again; btrfs check clean"
}

remove_case single 1 "-n 4096 -m single" metadata,dup 2
remove_case raid1 2 "-n 16384 -m raid1 -d raid1" metadata,raid1 2

# With a block group tree: the items go from tree 11.
IMG=$T/bgt.img
mkimg "$IMG" 1G -n 4096 -m dup
"$FSCTL" -q convert --bg-tree "$IMG" > /dev/null || fail "bgt: convert --bg-tree"
"$CT" "$IMG" alloc metadata,dup --keep-empty > "$T/bgt.a" 2>&1 || { cat "$T/bgt.a"; fail "bgt: alloc"; }
bgt=$(new_starts "$T/bgt.a")
btrfs inspect-internal dump-tree -t 11 "$IMG" | grep_q "key ($bgt BLOCK_GROUP_ITEM" || fail "bgt: no item in the block group tree"
"$CT" "$IMG" remove "$bgt" > "$T/bgt.rm" 2>&1 || { cat "$T/bgt.rm"; fail "bgt: remove"; }
check_clean "bgt: after remove" "$IMG"
$CC verify-gone "$IMG" "$bgt" "$(awk '/^new/ {print $3}' "$T/bgt.a")" | sed "s/^/bgt: /" || fail "bgt: traces left"
$CC bytes-used "$IMG" > /dev/null || fail "bgt: bytes_used"
kernel_rw bgt "$IMG"

# ---- refusals: exit code and a byte-identical image
same_image() {  # WHAT EXPECTED-RC CMD...
  local what=$1 want=$2; shift 2
  local sum0 sum1 rc=0
  sum0=$(img_sum "$IMG")
  "$@" > "$T/refusal.log" 2>&1 || rc=$?
  sum1=$(img_sum "$IMG")
  [ "$rc" = "$want" ] || { cat "$T/refusal.log"; fail "$what: exit $rc, expect $want"; }
  [ "$sum0" = "$sum1" ] || fail "$what: the image changed"
  echo "refused ($rc, image unchanged): $what: $(grep chunk_torture "$T/refusal.log" | head -1 | sed 's/^chunk_torture: //')"
}

IMG=$T/full.img
mkimg "$IMG" 1G -n 4096 -m single
same_image "RAID1 metadata on one device" 4 "$CT" "$IMG" alloc metadata,raid1
same_image "a DATA chunk" 5 "$CT" "$IMG" alloc data
same_image "20 metadata chunks in one transaction on 1 GiB" 4 "$CT" "$IMG" alloc metadata --count 20
n=0
while "$CT" "$IMG" alloc metadata > "$T/fill.log" 2>&1; do n=$((n + 1)); [ $n -lt 50 ] || fail "the device never filled"; done
grep -q "no unallocated space" "$T/fill.log" || { cat "$T/fill.log"; fail "filling the device stopped for another reason"; }
echo "full: $n metadata chunks allocated one per transaction until the device was full"
check_clean "full device" "$IMG"
same_image "a metadata chunk on a full device" 4 "$CT" "$IMG" alloc metadata
same_image "a system chunk on a full device" 4 "$CT" "$IMG" alloc system
kernel_rw "full device" "$IMG"

# sys_chunk_array: 2048 bytes hold 21 single SYSTEM chunk entries of 97 bytes.
IMG=$T/sysarray.img
mkimg "$IMG" 4G -n 4096 -m single
same_image "21 more SYSTEM chunks (sys_chunk_array full)" 4 "$CT" "$IMG" alloc system --count 21
grep -q "sys_chunk_array" "$T/refusal.log" || fail "the refusal does not name sys_chunk_array"
"$CT" "$IMG" alloc system --count 20 > "$T/sys20.log" 2>&1 || { cat "$T/sys20.log"; fail "20 more SYSTEM chunks"; }
[ "$($CC sys-array "$IMG" | wc -w)" = 21 ] || fail "sys_chunk_array does not list 21 chunks"
[ "$(super_field "$IMG" sys_array_size)" = 2037 ] || fail "sys_chunk_array_size (dump-super: sys_array_size) is not 2037"
check_clean "21 SYSTEM chunks" "$IMG"
echo "sysarray: 21 SYSTEM chunks in sys_chunk_array (2037 bytes)"
same_image "a 22nd SYSTEM chunk" 4 "$CT" "$IMG" alloc system
kernel_rw "sysarray" "$IMG"

# Removing what is not empty.
IMG=$T/busy.img
mkimg "$IMG" 1G -n 4096 -m single
"$CT" "$IMG" fill --ops 500 > "$T/busy.log" 2>&1 || { cat "$T/busy.log"; fail "busy: fill"; }
busy=$(awk '/^new [0-9]* [0-9]* METADATA/ {print $2; exit}' "$T/busy.log")
[ -n "$busy" ] || fail "busy: no new metadata chunk"
"$CT" "$IMG" clear > /dev/null || fail "busy: clear"
same_image "removing the metadata group global trees still use" 3 "$CT" "$IMG" remove "$busy"
grep -q "not empty" "$T/refusal.log" || fail "the refusal does not say 'not empty'"
same_image "removing a start that is no block group" 3 "$CT" "$IMG" remove $((busy + 4096))
same_image "removing a chunk in the transaction that created it" 3 "$CT" "$IMG" alloc metadata --then-remove
check_clean "busy" "$IMG"
echo ok
