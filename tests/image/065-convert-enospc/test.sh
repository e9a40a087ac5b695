#!/usr/bin/env bash
# 065-convert-enospc: on a filesystem whose devices are fully allocated and
# whose metadata is nearly full, `fsctl convert --bg-tree` (and `fsctl
# balance -m`) fail with ENOSPC (exit 6, "nothing was written") before any
# write — not a half-done conversion — and the image is byte-identical.
# The image: 300 MiB, single profiles, data chunks preallocated by the kernel
# until no device space is left, then the metadata group filled by
# tests/tools/chunk_torture (items into scratch tree 200, 20 per
# transaction) until its own reservation fails.
# Nearly full is not full: there, convert's default batch (1024) does not fit
# but smaller ones do, and convert halves its batch until the reservation
# fits (it used to commit the conversion mark, then fail the first batch
# with ENOSPC, leaving a half-converted filesystem: found on the manybg
# fixture). So: convert completes there with a smaller batch (btrfs check
# passes, --no-bg-tree back too), and only after filling on with one item per
# transaction does it fail before any write.
source "$(dirname "$0")/../common/lib.sh"
need_mount
CT=${FSCTL_CHUNK_TORTURE:?FSCTL_CHUNK_TORTURE must point at the chunk_torture test tool}
IMG="$T/full.img"
mkimg "$IMG" 300M -n 4096 -m single -d single
mkdir -p "$T/mnt"
mount -o loop "$IMG" "$T/mnt"
for i in $(seq 1 40); do fallocate -l 8M "$T/mnt/d$i" 2>/dev/null || break; done
for i in $(seq 1 300); do fallocate -l 1M "$T/mnt/e$i" 2>/dev/null || break; done
unalloc=$(btrfs filesystem usage -b "$T/mnt" | awk '/Device unallocated:/ { print $3 }')
umount "$T/mnt"
[ "${unalloc:-0}" -lt $((8 << 20)) ] || fail "device space left: $unalloc bytes"
rc=0
"$CT" "$IMG" fill --ops 20 --new-chunks 5 > "$T/fill.out" 2>&1 || rc=$?
[ $rc -eq 4 ] || { tail -5 "$T/fill.out"; fail "filling metadata: exit $rc, expect 4 (ENOSPC once full)"; }
btrfs check --readonly "$IMG" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check on the full image"; }
# Nearly full: balance -m cannot; convert can, in smaller batches.
cp --sparse=always "$IMG" "$T/near.img"
before=$(sha256sum < "$T/near.img")
rc=0
"$FSCTL" balance -m "$T/near.img" > "$T/out" 2> "$T/err" || rc=$?
[ $rc -eq 6 ] && grep_q "not enough metadata space.*nothing was written" < "$T/err" || { cat "$T/err"; fail "balance -m on the nearly full image: exit $rc, expect 6 (ENOSPC)"; }
[ "$(sha256sum < "$T/near.img")" = "$before" ] || fail "balance -m changed the nearly full image"
echo "nearly full: fsctl balance -m: $(cat "$T/err")"
"$FSCTL" --format json convert --bg-tree "$T/near.img" > "$T/cv.json" 2> "$T/err" || { cat "$T/err"; fail "convert --bg-tree on the nearly full image"; }
python3 - "$T/cv.json" <<'PY' || fail "convert report on the nearly full image"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["state_after"] == "block-group-tree" and r["block_groups_moved"] == r["block_groups_total"], r
assert 1 <= r["batch"] < 1024 and r["used_bytes"] <= r["reserved_bytes"], r
print(f"nearly full: convert --bg-tree completed with batch {r['batch']} (asked 1024) in {r['commits']} commits, {r['block_groups_moved']} block groups")
PY
btrfs check --readonly "$T/near.img" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check after the batch-halving conversion"; }
"$FSCTL" convert --no-bg-tree "$T/near.img" > /dev/null 2> "$T/err" || { cat "$T/err"; fail "convert --no-bg-tree on the nearly full image"; }
btrfs check --readonly "$T/near.img" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check after --no-bg-tree"; }
echo "nearly full: btrfs check passes after --bg-tree and after --no-bg-tree"

# Full: one item per transaction until even that fails.
rc=0
"$CT" "$IMG" fill --ops 1 --new-chunks 5 > "$T/fill1.out" 2>&1 || rc=$?
[ $rc -eq 4 ] || { tail -5 "$T/fill1.out"; fail "filling metadata one item at a time: exit $rc, expect 4"; }
btrfs check --readonly "$IMG" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check on the full image"; }
before=$(sha256sum < "$IMG")
rc=0
"$FSCTL" balance -m "$IMG" > "$T/out" 2> "$T/err" || rc=$?
[ $rc -eq 6 ] || { cat "$T/err"; fail "fsctl balance -m: exit $rc, expect 6 (ENOSPC)"; }
grep_q "not enough metadata space.*nothing was written" < "$T/err" || { cat "$T/err"; fail "fsctl balance -m: no ENOSPC message"; }
[ "$(sha256sum < "$IMG")" = "$before" ] || fail "fsctl balance -m changed the image"
echo "full: fsctl balance -m: $(cat "$T/err")"
# convert needs less than one torture item per commit (its batch goes down to
# one block group), so here it may still fit: either ENOSPC before any write
# (image byte-identical) or a complete conversion that btrfs check accepts;
# never a half-converted filesystem.
rc=0
"$FSCTL" --format json convert --bg-tree "$IMG" > "$T/cv.json" 2> "$T/err" || rc=$?
if [ $rc -eq 6 ]; then
  grep_q "not enough metadata space.*nothing was written" < "$T/err" || { cat "$T/err"; fail "convert: no ENOSPC message"; }
  [ "$(sha256sum < "$IMG")" = "$before" ] || fail "convert --bg-tree failed with ENOSPC but changed the image"
  echo "full: fsctl convert --bg-tree: $(cat "$T/err")"
elif [ $rc -eq 0 ]; then
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["state_after"] == "block-group-tree", r; print("full: convert --bg-tree still fit, batch", r["batch"], "in", r["commits"], "commits")' "$T/cv.json" || fail "convert report"
  btrfs check --readonly "$IMG" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check after converting the full image"; }
else
  cat "$T/err"; fail "convert --bg-tree on the full image: exit $rc (expect 6, or 0 with the conversion done)"
fi
echo PASS
