#!/usr/bin/env bash
# 089-balance-image: the helpers of common/balance_image.sh that the
# `fsctl balance -m` tests build on. Proves: make_balance_image makes a
# quota image the offline checkers accept (btrfs check --readonly and
# --qgroup-report clean, fsctl qgroup verify exit 0, level-1 qgroup 1/100 with
# members, zstd extents, 16 snapshots); record_state does not change the image
# (a copy recorded gives the same state, and both files stay byte-identical);
# compare_state finds a changed file hash and a changed qgroup number and
# names them.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/balance_image.sh"
need_mount

IMG="$T/bal.img"
t0=$SECONDS
make_balance_image "$IMG" 4096
echo "made the image in $((SECONDS - t0)) s"

# The checkers accept it.
set +e
btrfs check --readonly "$IMG" > "$T/check.txt" 2>&1; rc=$?
set -e
[ $rc -eq 0 ] || { cat "$T/check.txt"; fail "btrfs check --readonly: exit $rc"; }
set +e
btrfs check --readonly --qgroup-report "$IMG" > "$T/qcheck.txt" 2>&1; rc=$?
set -e
[ $rc -eq 0 ] || { cat "$T/qcheck.txt"; fail "btrfs check --qgroup-report: exit $rc"; }
! grep -q "are different" "$T/qcheck.txt" || { cat "$T/qcheck.txt"; fail "btrfs check --qgroup-report: qgroups differ"; }
"$FSCTL" qgroup verify "$IMG" > "$T/verify.txt" || { cat "$T/verify.txt"; fail "fsctl qgroup verify: exit $?"; }

# What the image holds.
cp --sparse=always "$IMG" "$T/copy.img"
sums0=$(img_sum "$IMG" "$T/copy.img")
t0=$SECONDS
record_state "$IMG" "$T/s1"
echo "recorded the state in $((SECONDS - t0)) s"
record_state "$T/copy.img" "$T/s2"
compare_state "$T/s1" "$T/s2" || fail "the state recorded from a copy differs"
[ "$(img_sum "$IMG" "$T/copy.img")" = "$sums0" ] || fail "recording the state changed an image (ro mount wrote)"

nsub=$(wc -l < "$T/s1/subvolumes.txt")
[ "$nsub" -eq 17 ] || fail "expect 17 subvolumes (base + 16 snapshots), got $nsub"
nfiles=$(grep -c '^f ' "$T/s1/files.txt")
[ "$nfiles" -ge $((17 * 3000)) ] || fail "expect >= 51000 regular files over all subvolumes, got $nfiles"
grep -q '^status consistent$' "$T/s1/kernel-qgroups.txt" || fail "the kernel reports quota inconsistent"
grep -q '^status quota_enabled=True inconsistent=False' "$T/s1/fsctl-qgroups.txt" || fail "fsctl qgroup show: quota off or inconsistent"
python3 - "$T/s1/fsctl-qgroups.json" <<'PY' || fail "qgroup 1/100 is not as made"
import json, sys
q = {x["qgroupid"]: x for x in json.load(open(sys.argv[1]))["qgroups"]}
one = q["1/100"]
assert len(one["children"]) == 3, one
assert one["referenced"] > 0, one
assert sum(1 for k in q if k.startswith("0/")) == 18, sorted(q)
PY
nzstd=$(btrfs inspect-internal dump-tree -t 256 "$IMG" | grep -c 'compression 3 (zstd)' || true)
[ "$nzstd" -ge 20 ] || fail "base has $nzstd zstd file extents, expect >= 20"
grep -q 'METADATA|DUP' <(state_bg_summary "$T/s1") || fail "no METADATA|DUP block group"
snap_excl=$(awk '$1 == "0/257" { print $3 }' "$T/s1/kernel-qgroups.txt")
[ "${snap_excl:-0}" -gt 0 ] || fail "snap1 has no exclusive bytes (its changes are missing)"
lvl=$(btrfs inspect-internal dump-tree -t 256 "$IMG" | awk '/^(node|leaf) [0-9]+ level/ && l == "" { l = $4 } END { print l }')
[ "$lvl" -ge 2 ] || fail "base's tree has root level $lvl at nodesize 4K, expect >= 2"
echo "image: 17 subvolumes, $nfiles files, $nzstd zstd extents in base, base tree root level $lvl"

# compare_state names a changed file hash ...
cp -r "$T/s1" "$T/s3"
victim=$(grep -m1 '^f snap7/d' "$T/s3/files.txt")
path=$(echo "$victim" | awk '{ print $2 }')
sed -i "s|^f $path \(.*\) [0-9a-f]\{64\}\$|f $path \1 $(printf '0%.0s' $(seq 64))|" "$T/s3/files.txt"
set +e
compare_state "$T/s1" "$T/s3" 2> "$T/cmp.err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "files differ at file $path" "$T/cmp.err" || { cat "$T/cmp.err"; fail "compare_state did not name the changed hash of $path"; }

# ... and a changed qgroup number, first, on a real change through the kernel.
mkdir -p "$T/rw"
mount -o loop "$T/copy.img" "$T/rw"
BI_MOUNTS+=("$T/rw")
echo "changed" >> "$T/rw/snap3/d000/f00001"
btrfs filesystem sync "$T/rw"
umount "$T/rw"
record_state "$T/copy.img" "$T/s4"
set +e
compare_state "$T/s1" "$T/s4" 2> "$T/cmp.err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "qgroup numbers (btrfs qgroup show --raw) differ at 0/" "$T/cmp.err" ||
  { cat "$T/cmp.err"; fail "compare_state did not name a changed qgroup"; }
sed 's/^/  /' "$T/cmp.err"
echo PASS
