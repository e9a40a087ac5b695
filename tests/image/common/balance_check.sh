# SPDX-License-Identifier: GPL-2.0-only
# What every `fsctl balance -m` result must satisfy. Source after lib.sh and
# balance_image.sh.
#
#   balance_after_checks IMG BEFORE_DIR OLD_STARTS_FILE NAME
#       btrfs check --readonly --qgroup-report clean; fsctl qgroup verify exit
#       0; no block group of OLD_STARTS_FILE (one logical start per line)
#       left in `fsctl inspect block-groups` nor a chunk in the chunk tree;
#       record_state equal to BEFORE_DIR (kernel and fsctl qgroup numbers,
#       subvolumes, every file's sha256); then the kernel mounts it
#       read-write, a snapshot deleted after mount is cleaned up, a new file
#       is written, and btrfs check --readonly passes after unmount.
balance_after_checks() {
  local img=$1 before=$2 old=$3 name=$4 rc
  set +e
  btrfs check --readonly --qgroup-report "$img" > "$T/$name.check" 2>&1; rc=$?
  set -e
  [ $rc -eq 0 ] || { tail -30 "$T/$name.check"; fail "$name: btrfs check --readonly --qgroup-report exit $rc"; }
  ! grep -q "are different\|ERROR\|error" "$T/$name.check" || { grep -m5 "are different\|ERROR\|error" "$T/$name.check"; fail "$name: btrfs check reports problems"; }
  "$FSCTL" qgroup verify "$img" > "$T/$name.verify" || { tail -5 "$T/$name.verify"; fail "$name: fsctl qgroup verify failed"; }
  "$FSCTL" --format json inspect block-groups "$img" > "$T/$name.bg.json"
  python3 - "$T/$name.bg.json" "$old" <<'PY' || fail "$name: a relocated block group is still there"
import json, sys
now = {b["start"] for b in json.load(open(sys.argv[1]))["block_groups"]}
old = {int(x) for x in open(sys.argv[2]).read().split()}
left = sorted(now & old)
assert not left, "block groups still present: %s" % left
PY
  local s
  for s in $(cat "$old"); do
    ! btrfs inspect-internal dump-tree -t chunk "$img" | grep_q "CHUNK_ITEM $s)" || fail "$name: chunk $s still in the chunk tree"
  done
  record_state "$img" "$T/$name.after"
  compare_state "$before" "$T/$name.after" || fail "$name: the balance changed qgroup numbers, subvolumes or files"
  mkdir -p "$T/$name.mnt"
  mount -o loop "$img" "$T/$name.mnt"
  BI_MOUNTS+=("$T/$name.mnt")
  local snap
  snap=$(btrfs subvolume list "$T/$name.mnt" | awk '!s && $NF ~ /snap/ { print $NF; s = 1 }')
  if [ -n "$snap" ]; then
    btrfs subvolume delete "$T/$name.mnt/$snap" > /dev/null
    # BTRFS_IOC_SYNC commits and wakes the cleaner, which drops the snapshot
    # now; without it the drop waited for the transaction kthread's next
    # wake-up (commit interval 30 s: 23-33 s a call here).
    btrfs filesystem sync "$T/$name.mnt"
    btrfs subvolume sync "$T/$name.mnt" > /dev/null
  fi
  head -c 100000 /dev/urandom > "$T/$name.mnt/after-balance"
  sync
  umount "$T/$name.mnt"
  set +e
  btrfs check --readonly "$img" > "$T/$name.check2" 2>&1; rc=$?
  set -e
  [ $rc -eq 0 ] || { tail -30 "$T/$name.check2"; fail "$name: btrfs check after kernel mount, snapshot delete and write: exit $rc"; }
}

# metadata_starts BLOCK_GROUPS_JSON: logical starts of the block groups
# `balance -m` relocates: METADATA and SYSTEM ones (not mixed), one per line.
metadata_starts() {
  python3 - "$1" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["block_groups"]:
    if b["flags"] & 7 in (2, 4):  # SYSTEM or METADATA alone (kernel BTRFS_BLOCK_GROUP_*)
        print(b["start"])
PY
}
