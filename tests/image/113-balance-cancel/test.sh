#!/usr/bin/env bash
# 113-balance-cancel: `fsctl balance cancel` deletes the BALANCE_ITEM of a
# paused kernel balance offline (btrfs balance cancel without a mount).
#  - a balance the kernel itself paused (`btrfs balance start -m` on
#    an image with ~100 MiB of metadata, `btrfs balance pause`, unmount;
#    when the kernel finished before the pause, a NOTE says so and the
#    planted item below covers the rest): the dry run writes nothing; the
#    real run: btrfs check clean, no BALANCE_ITEM, the kernel mounts
#    read-write with no balance (`btrfs balance status`: none), every
#    file's sha256 unchanged; a rerun has nothing to do;
#    Before it, `fsctl balance status` says paused (exit 1, metadata, its
#    JSON valid), as the kernel's `btrfs balance status` does on a copy
#    mounted with skip_balance; after it, "No balance found" (exit 0).
#  - the same on an image with quota, subvolumes and a snapshot whose
#    BALANCE_ITEM is planted (tests/tools/put_item, the kernel's bytes), with
#    a crash at every write request (FSCTL_FAIL_AFTER_WRITES=N, exit 86):
#    btrfs check clean, the rerun completes, qgroups still verify;
#  - refusals, the image unchanged, naming the state: a planted relocation
#    tree that is subvolume 256's own root node (owner 256 without
#    FULL_BACKREF: corrupt, exit 3, naming the block), a data relocation
#    tree holding a file extent item (exit 4); exit 5 when mounted. (Real
#    relocation trees the kernel left are dropped: test 116.)
source "$(dirname "$0")/../common/lib.sh"
need_mount
PUT=${FSCTL_PUT_ITEM:?FSCTL_PUT_ITEM must point at the put_item test tool}
MNT="$T/mnt"
mkdir -p "$MNT"
LOOPS=()
trap 'release_all "$MNT" -- "${LOOPS[@]}"' EXIT

has_balance_item() { btrfs inspect-internal dump-tree -t root "$1" | grep_q -E 'key \(BALANCE TEMPORARY_ITEM 0\)|key \(18446744073709551612 TEMPORARY_ITEM 0\)'; }

# 1. A balance paused by the kernel.
K="$T/k.img"
mkimg "$K" 2G -n 4096
mount -o loop "$K" "$MNT"
python3 - "$MNT" <<'PY'
import os, sys
d = sys.argv[1]
for i in range(40):
    os.mkdir(os.path.join(d, "d%d" % i))
    for j in range(600):
        with open(os.path.join(d, "d%d" % i, "f%d" % j), "wb") as f:
            f.write(os.urandom(100 + (i * 600 + j) % 1500))
PY
(cd "$MNT" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$T/k.sum"
sync
# In the foreground of a background job, not --bg: the job's exit is the
# event that the kernel's balance has stopped (paused or finished) and let go
# of the mount (after --bg, umount could find the mount still busy with the
# balance thread exiting: "target is busy", seen once in a loaded suite run).
btrfs balance start -m "$MNT" > /dev/null 2>&1 &
balance_job=$!
paused=0
btrfs balance pause "$MNT" > /dev/null 2>&1 && paused=1
wait "$balance_job" || true
umount "$MNT"
if [ "$paused" = 1 ] && has_balance_item "$K"; then
  btrfs check --readonly "$K" > "$T/k.check" 2>&1 || { cat "$T/k.check"; fail "the kernel's paused image does not check clean"; }
  before=$(img_sum "$K")
  # balance status, offline and the kernel's (on a copy: skip_balance keeps
  # the balance paused; a plain mount would resume it).
  rc=0; "$FSCTL" balance status "$K" > "$T/k.st" || rc=$?
  [ "$rc" = 1 ] || { cat "$T/k.st"; fail "balance status of a paused balance: exit $rc, expect 1"; }
  grep_q "^Balance on '$K' is paused (a kernel balance of .*metadata" < "$T/k.st" || { cat "$T/k.st"; fail "balance status text"; }
  rc=0; "$FSCTL" --format json balance status "$K" > "$T/k.st.json" || rc=$?
  [ "$rc" = 1 ] || fail "balance status --format json: exit $rc, expect 1"
  python3 "$FSCTL_SRC/tests/tools/validate_json.py" --expect report "$T/k.st.json" || fail "balance status JSON does not match its schema"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["balance"]=="paused" and "metadata" in j["balance_types"] and j["leftover_work"]["balance_paused"], j' "$T/k.st.json" ||
    fail "balance status JSON"
  cp --sparse=always "$K" "$T/k2.img"
  mount -o loop,skip_balance "$T/k2.img" "$MNT"
  btrfs balance status "$MNT" > "$T/k2.status" 2>&1 || true
  umount "$MNT"
  rm -f "$T/k2.img"
  grep_q "is paused" < "$T/k2.status" || { cat "$T/k2.status"; fail "fsctl balance status said paused, the kernel's did not"; }
  [ "$(img_sum "$K")" = "$before" ] || fail "balance status changed the image"
  "$FSCTL" balance cancel --dry-run "$K" | grep_q "^dry run: would cancel the paused balance of metadata" || fail "dry run text"
  [ "$(img_sum "$K")" = "$before" ] || fail "the dry run changed the image"
  "$FSCTL" --format json balance cancel "$K" > "$T/k.json" || fail "balance cancel"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["balance_found"] and j["wrote"] and j["balance_flags"] & 4, j' "$T/k.json" ||
    fail "balance cancel JSON"
  btrfs check --readonly "$K" > "$T/k.check" 2>&1 || { cat "$T/k.check"; fail "btrfs check after balance cancel"; }
  ! has_balance_item "$K" || fail "the BALANCE_ITEM is still there"
  out=$("$FSCTL" balance cancel "$K") || fail "rerun"
  [ "$("$FSCTL" balance status "$K")" = "No balance found on '$K'" ] || fail "balance status after the cancel"
  [ "$out" = "no paused or interrupted kernel balance: nothing to do" ] || fail "rerun said: $out"
  mount -o loop "$K" "$MNT"
  btrfs balance status "$MNT" > "$T/k.status" 2>&1 || true
  grep_q "No balance found" < "$T/k.status" || { cat "$T/k.status"; fail "the kernel resumed a balance after fsctl balance cancel"; }
  (cd "$MNT" && sha256sum --quiet -c "$T/k.sum") || fail "file contents changed"
  touch "$MNT/written-after-cancel"
  umount "$MNT"
  btrfs check --readonly "$K" > "$T/k.check" 2>&1 || { cat "$T/k.check"; fail "btrfs check after the kernel's rw mount"; }
  echo "kernel-paused balance: cancelled"
else
  echo "NOTE: the kernel finished the balance before the pause: the kernel-paused case is not tested this time"
fi

# 2. A planted BALANCE_ITEM on an image with quota and a snapshot; a crash
# at every write.
IMG="$T/q.img"
mksnapimg "$IMG" 60 5
"$PUT" "$IMG" 1 -4 248 0 "04$(printf '0%.0s' $(seq 1 894))"
btrfs check --readonly "$IMG" > /dev/null 2>&1 || fail "planted image does not check clean"
rc=0; "$FSCTL" balance status "$IMG" > "$T/q.st" || rc=$?
[ "$rc" = 1 ] && grep_q "is paused (a kernel balance of metadata block groups" < "$T/q.st" || { cat "$T/q.st"; fail "balance status of the planted item: exit $rc"; }
balance_item_gone() { ! has_balance_item "$1" || fail "N=$2: the BALANCE_ITEM survived the rerun"; }
crash_every_write "$IMG" balance_item_gone balance cancel
C="$T/crash.img"
btrfs check --readonly "$C" > /dev/null 2>&1 || fail "btrfs check after the uninterrupted run"
"$FSCTL" balance status "$C" > /dev/null || fail "balance status after the cancel: exit $?"
"$FSCTL" qgroup verify "$C" > /dev/null || fail "qgroups after balance cancel"
mount -o loop "$C" "$MNT"
btrfs balance status "$MNT" 2>&1 | grep_q "No balance found" || fail "a balance is found after the cancel"
umount "$MNT"

# 3. Refusals, nothing written.
cp --sparse=always "$IMG" "$T/r.img"
key=$(btrfs inspect-internal dump-tree -t root "$T/r.img" | grep -oE 'key \(256 ROOT_ITEM [0-9]+\)' | head -1 | grep -oE '[0-9]+\)$' | tr -d ')')
[ -n "$key" ] || fail "no ROOT_ITEM of subvolume 256"
"$PUT" "$T/r.img" copy 1 256 132 "$key" -8 132 256
before=$(img_sum "$T/r.img")
rc=0; "$FSCTL" --format json balance cancel "$T/r.img" > "$T/r.json" 2> "$T/r.err" || rc=$?
[ $rc -eq 3 ] && grep_q "of tree 18446744073709551608 has owner 256 and no FULL_BACKREF flag" < "$T/r.err" ||
  { cat "$T/r.err"; fail "planted relocation tree: exit $rc, expect 3 naming the block and its owner"; }
[ "$(img_sum "$T/r.img")" = "$before" ] || fail "the refused run changed the image (relocation tree)"

cp --sparse=always "$IMG" "$T/d.img"
# A file extent item (257, EXTENT_DATA 108, 0) in the data relocation tree
# (-9), as an interrupted data relocation leaves (53 zero bytes: what the
# item says does not matter, its presence is refused). A relocation inode
# alone (INODE_ITEM and ORPHAN item, as every relocated block group leaves)
# is cleared instead: test 116.
"$PUT" "$T/d.img" -9 257 108 0 "$(printf '0%.0s' $(seq 1 106))"
before=$(img_sum "$T/d.img")
rc=0; "$FSCTL" balance cancel "$T/d.img" > /dev/null 2> "$T/d.err" || rc=$?
[ $rc -eq 4 ] && grep_q "data relocation tree" < "$T/d.err" || { cat "$T/d.err"; fail "data relocation tree: exit $rc, expect 4 naming it"; }
[ "$(img_sum "$T/d.img")" = "$before" ] || fail "the refused run changed the image (data relocation tree)"

mount -o loop -o skip_balance "$IMG" "$MNT"
rc=0; "$FSCTL" balance cancel "$IMG" > /dev/null 2>&1 || rc=$?
[ $rc -eq 5 ] || fail "mounted: exit $rc, expect 5"
umount "$MNT"
echo PASS
