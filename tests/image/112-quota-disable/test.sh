#!/usr/bin/env bash
# 112-quota-disable: `fsctl quota disable` deletes the quota tree offline
# (btrfs quota disable without a mount). On a kernel-made image with quota,
# a subvolume, its snapshot, files at the top level and a level-1 qgroup
# holding both subvolumes:
#  - the dry run writes nothing (image identical) and says what it would do;
#  - the real run: btrfs check --readonly clean, fsctl check clean, no
#    ROOT_ITEM of tree 8 left, the kernel mounts read-write, `btrfs qgroup
#    show` says quota is not enabled, every file's sha256 unchanged; then the
#    kernel's `btrfs quota enable` + `rescan -w` work and the result checks
#    clean; a rerun says there is nothing to do (exit 0);
#  - a crash at every write request (FSCTL_FAIL_AFTER_WRITES=N, exit 86):
#    btrfs check clean, quota still on or already off, the rerun completes;
#  - refusals, exit and image unchanged: mounted (5), a seed device (4);
#  - simple quotas (when the btrfs-progs at /var/tmp/btrfs-progs-ref can make
#    them): disabled as the kernel's quota disable does on a copy (the
#    SIMPLE_QUOTA bit and the owner refs stay), newer btrfs check clean,
#    kernel rw mount, files intact;
#  - a paused kernel balance (BALANCE_ITEM planted with put_item) does not
#    stop it: it is reported in leftover_work and quota goes.
source "$(dirname "$0")/../common/lib.sh"
need_mount
PUT=${FSCTL_PUT_ITEM:?FSCTL_PUT_ITEM must point at the put_item test tool}
MNT="$T/mnt"
mkdir -p "$MNT"
LOOPS=()
trap 'release_all "$MNT" -- "${LOOPS[@]}"' EXIT

IMG="$T/q.img"
mksnapimg "$IMG" 120 10
mount -o loop "$IMG" "$MNT"
for i in $(seq 1 20); do head -c $((i * 1000)) /dev/urandom > "$MNT/top$i"; done
btrfs qgroup create 1/100 "$MNT"
btrfs qgroup assign 0/256 1/100 "$MNT" > /dev/null 2>&1 || true
btrfs qgroup assign 0/257 1/100 "$MNT" > /dev/null 2>&1 || true
btrfs quota rescan -w "$MNT" > /dev/null
(cd "$MNT" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$T/files.sum"
umount "$MNT"
btrfs check --readonly "$IMG" > /dev/null 2>&1 || fail "base image does not check clean"

has_quota_tree() { btrfs inspect-internal dump-tree -t root "$1" | grep_q -E 'key \(QUOTA_TREE ROOT_ITEM 0\)|key \(8 ROOT_ITEM 0\)'; }
has_quota_tree "$IMG" || fail "base image has no quota tree"

# Dry run: nothing written.
before=$(img_sum "$IMG")
"$FSCTL" --format json quota disable --dry-run "$IMG" > "$T/dry.json" || fail "dry run"
[ "$(img_sum "$IMG")" = "$before" ] || fail "the dry run changed the image"
python3 - "$T/dry.json" <<'PY' || fail "dry run JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["dry_run"] and j["quota_was_enabled"] and not j["wrote"], j
assert j["qgroups"] >= 4 and j["relations"] == 2 and j["quota_tree_blocks"] >= 1, j
assert j["reserved_bytes"] > 0, j
PY
"$FSCTL" quota disable -n "$IMG" | grep_q "^dry run: would delete the quota tree" || fail "dry run text"

# The real run.
cp --sparse=always "$IMG" "$T/a.img"
"$FSCTL" --format json quota disable "$T/a.img" > "$T/run.json" || fail "quota disable"
python3 - "$T/run.json" <<'PY' || fail "run JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["quota_was_enabled"] and j["wrote"] and j["transid"] > 0 and not j["interrupted"], j
assert 0 < j["used_bytes"] <= j["reserved_bytes"], j
PY
btrfs check --readonly "$T/a.img" > "$T/check.out" 2>&1 || { cat "$T/check.out"; fail "btrfs check after quota disable"; }
"$FSCTL" check "$T/a.img" > /dev/null 2>&1 || fail "fsctl check after quota disable"
! has_quota_tree "$T/a.img" || fail "the quota tree's ROOT_ITEM is still there"
rc=0; "$FSCTL" qgroup verify "$T/a.img" > /dev/null 2>&1 || rc=$?
[ $rc -eq 7 ] || fail "qgroup verify after quota disable: exit $rc, expect 7 (quota not enabled)"
out=$("$FSCTL" quota disable "$T/a.img") || fail "rerun"
[ "$out" = "quota is not enabled on this filesystem: nothing to do" ] || fail "rerun said: $out"

# The kernel: read-write mount, quota off, files intact; then the kernel
# enables quota again and rescans.
mount -o loop "$T/a.img" "$MNT"
rc=0; btrfs qgroup show "$MNT" > "$T/show.out" 2>&1 || rc=$?
[ $rc -ne 0 ] && grep_q -i "quota.*not enabled\|not enabled" < "$T/show.out" || { cat "$T/show.out"; fail "btrfs qgroup show: quota still on (exit $rc)"; }
(cd "$MNT" && sha256sum --quiet -c "$T/files.sum") || fail "file contents changed"
echo more > "$MNT/after-disable"
btrfs quota enable "$MNT"
btrfs quota rescan -w "$MNT" > /dev/null
btrfs qgroup show "$MNT" | grep_q "^0/256 " || fail "no qgroup 0/256 after the kernel's quota enable"
umount "$MNT"
btrfs check --readonly "$T/a.img" > "$T/check2.out" 2>&1 || { cat "$T/check2.out"; fail "btrfs check after the kernel's quota enable"; }
"$FSCTL" qgroup verify "$T/a.img" > /dev/null || fail "fsctl qgroup verify after the kernel's rescan"

# A crash at every write request, then the rerun.
quota_tree_gone() { ! has_quota_tree "$1" || fail "N=$2: the quota tree survived the rerun"; }
crash_every_write "$IMG" quota_tree_gone quota disable
C="$T/crash.img"

# Refusals, nothing written.
mount -o loop "$IMG" "$MNT"
rc=0; "$FSCTL" quota disable "$IMG" > /dev/null 2>&1 || rc=$?
[ $rc -eq 5 ] || fail "mounted: exit $rc, expect 5"
umount "$MNT"
cp --sparse=always "$IMG" "$T/seed.img"
btrfstune -S 1 "$T/seed.img" > /dev/null 2>&1 || fail "btrfstune -S 1"
before=$(img_sum "$T/seed.img")
rc=0; "$FSCTL" quota disable "$T/seed.img" > /dev/null 2> "$T/seed.err" || rc=$?
[ $rc -eq 4 ] && grep_q -i "seed" < "$T/seed.err" || { cat "$T/seed.err"; fail "seed device: exit $rc, expect 4 naming it"; }
[ "$(img_sum "$T/seed.img")" = "$before" ] || fail "the seed device changed"

# Simple quotas (a btrfs-progs with mkfs -O squota, kernel writes under
# them): disabled as the kernel does it, compared with the kernel's own
# `btrfs quota disable` on a copy: the SIMPLE_QUOTA bit and the data
# extents' owner refs stay in both; the newer btrfs check passes.
REF=/var/tmp/btrfs-progs-ref
if [ -x "$REF/mkfs.btrfs" ] && "$REF/mkfs.btrfs" -O list-all 2>&1 | grep_q squota; then
  mkimg "$T/sq.img" 512M
  "$REF/mkfs.btrfs" -q -f -O squota "$T/sq.img" > /dev/null
  mount -o loop "$T/sq.img" "$MNT"
  for i in $(seq 1 10); do head -c $((i * 20000)) /dev/urandom > "$MNT/s$i"; done
  btrfs subvolume create "$MNT/ssv" > /dev/null
  head -c 70000 /dev/urandom > "$MNT/ssv/x"
  (cd "$MNT" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$T/sq.sum"
  umount "$MNT"
  cp --sparse=always "$T/sq.img" "$T/sqk.img"
  "$FSCTL" --format json quota disable "$T/sq.img" > "$T/sq.json" 2> "$T/sq.err" || { cat "$T/sq.err"; fail "squota: quota disable"; }
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["wrote"] and j["simple_quota"], j' "$T/sq.json" || fail "squota JSON"
  "$CHECK_RETRY" "$REF/btrfs" check --readonly "$T/sq.img" > "$T/sq.check" 2>&1 || { cat "$T/sq.check"; fail "squota: btrfs check (newer) after quota disable"; }
  mount -o loop "$T/sqk.img" "$MNT"
  btrfs quota disable "$MNT"
  umount "$MNT"
  incompat() { "$REF/btrfs" inspect-internal dump-super "$1" | awk '$1 == "incompat_flags" {print $2}'; }
  [ "$(incompat "$T/sq.img")" = "$(incompat "$T/sqk.img")" ] ||
    fail "squota: incompat_flags $(incompat "$T/sq.img"), the kernel's quota disable leaves $(incompat "$T/sqk.img")"
  owners() { "$REF/btrfs" inspect-internal dump-tree -t extent "$1" | grep -c 'extent owner root' || true; }
  [ "$(owners "$T/sq.img")" = "$(owners "$T/sqk.img")" ] && [ "$(owners "$T/sq.img")" -gt 0 ] ||
    fail "squota: owner refs $(owners "$T/sq.img"), the kernel leaves $(owners "$T/sqk.img")"
  mount -o loop "$T/sq.img" "$MNT"
  rc=0; btrfs qgroup show "$MNT" > "$T/sq.show" 2>&1 || rc=$?
  [ $rc -ne 0 ] || { cat "$T/sq.show"; fail "squota: qgroup show still works after quota disable"; }
  (cd "$MNT" && sha256sum --quiet -c "$T/sq.sum") || fail "squota: file contents changed"
  echo after > "$MNT/s-after"
  umount "$MNT"
  "$CHECK_RETRY" "$REF/btrfs" check --readonly "$T/sq.img" > "$T/sq.check" 2>&1 || { cat "$T/sq.check"; fail "squota: btrfs check after the kernel's rw mount"; }
else
  echo "NOTE: no btrfs-progs with squota at $REF: simple quotas are not tested"
fi

# A paused kernel balance (BALANCE_ITEM: BALANCE_OBJECTID -4, TEMPORARY_ITEM
# 248, 0; flags METADATA) does not stop it, and is reported.
cp --sparse=always "$IMG" "$T/b.img"
"$PUT" "$T/b.img" 1 -4 248 0 "04$(printf '0%.0s' $(seq 1 894))"
"$FSCTL" --format json quota disable "$T/b.img" > "$T/b.json" 2> "$T/b.err" || { cat "$T/b.err"; fail "quota disable with a paused balance"; }
grep_q "NOTE: a kernel balance of metadata block groups is paused" < "$T/b.err" || { cat "$T/b.err"; fail "no balance NOTE"; }
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["wrote"] and j["leftover_work"]["balance_paused"], j' "$T/b.json" ||
  fail "paused balance JSON"
btrfs check --readonly "$T/b.img" > "$T/check.b" 2>&1 || { cat "$T/check.b"; fail "btrfs check after quota disable with a paused balance"; }
echo PASS
