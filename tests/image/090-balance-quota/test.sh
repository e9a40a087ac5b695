#!/usr/bin/env bash
# 090-balance-quota: `fsctl balance -m` on kernel-made quota images
# (common/balance_image.sh: thousands of small files, 16 snapshots with a few
# files changed each, reflinks, zstd extents, a level-1 qgroup) at nodesize 4K
# and 16K. Every metadata and system block group is relocated and removed; afterwards
# (common/balance_check.sh) btrfs check --readonly --qgroup-report is clean,
# fsctl qgroup verify exits 0, every qgroup number (kernel and on-disk), the
# subvolume list and every file's sha256 equal the state before, the kernel
# mounts it read-write, cleans up a snapshot deleted after mount, writes a
# file, and btrfs check still passes. The JSON report says 0 qgroup dirty
# extents and qgroups verified consistent. A second run relocates the new
# groups again (balance is repeatable).
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/balance_image.sh"
source "$(dirname "$0")/../common/balance_check.sh"
need_mount

for ns in 4096 16384; do
  IMG="$T/bal-$ns.img"
  make_balance_image "$IMG" "$ns" "${BALANCE_SCALE:-3000}"
  # Changes in base after its snapshots: the kernel copies shared blocks of
  # base (their owner) and turns them into FULL_BACKREF blocks whose children
  # and data extents are referenced by parent bytenr — what relocation must
  # remap.
  mkdir -p "$T/m-$ns"
  mount -o loop "$IMG" "$T/m-$ns"
  BI_MOUNTS+=("$T/m-$ns")
  for d in d000 d007 d013 d021; do
    for f in "$T/m-$ns/base/$d"/f*1; do echo "changed in base" >> "$f"; done
  done
  umount "$T/m-$ns"
  record_state "$IMG" "$T/before-$ns"
  metadata_starts "$T/before-$ns/block-groups.json" > "$T/old-$ns"
  nold=$(wc -l < "$T/old-$ns")
  [ "$nold" -ge 1 ] || fail "no metadata block group in the $ns image"
  "$FSCTL" --format json balance -m "$IMG" > "$T/bal-$ns.json" || { cat "$T/bal-$ns.json"; fail "nodesize $ns: fsctl balance -m failed"; }
  python3 - "$T/bal-$ns.json" "$nold" <<'PY' || fail "nodesize $ns: unexpected balance report"
import json, sys
r = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert r["block_groups_selected"] == n and r["block_groups_relocated"] == n and r["block_groups_removed"] == n, r
assert r["relocated_extents"] > 100, r
assert r["tree_blocks_copied"] >= r["relocated_extents"], r
assert r["qgroup_dirty_extents"] == 0, r
assert r["backrefs_remapped"] > 0, r
assert r["qgroups"]["verified"] and r["qgroups"]["consistent"], r
assert 0 < r["used_bytes"] <= r["reserved_bytes"], r
print("%d block groups, %d extents relocated, %d blocks copied (%d ancestors), %d backrefs remapped, %d commits, %.3f s" % (
    n, r["relocated_extents"], r["tree_blocks_copied"], r["ancestors_copied"], r["backrefs_remapped"], r["commits"], r["seconds"]))
PY
  balance_after_checks "$IMG" "$T/before-$ns" "$T/old-$ns" "n$ns"
  echo "nodesize $ns: all checks passed"
done

# Repeatable: balancing the balanced 4K image again moves the new groups.
IMG="$T/bal-4096.img"
record_state "$IMG" "$T/again-before"
metadata_starts "$T/again-before/block-groups.json" > "$T/old-again"
"$FSCTL" balance -m "$IMG" || fail "second balance failed"
balance_after_checks "$IMG" "$T/again-before" "$T/old-again" "again"
echo PASS
