#!/usr/bin/env bash
# 065-convert-enospc: on a filesystem whose devices are fully allocated and
# whose metadata is filled step by step, `fsctl convert --bg-tree` either
# completes (btrfs check clean) or fails with ENOSPC (exit 6, "nothing was
# written") before any write, the image byte-identical — never a
# half-converted filesystem; `fsctl balance -m` fails the same clean way.
#
# The image: 900 MiB file, mkfs -b 256M (4K nodes, single profiles), the
# data space filled by the kernel, then grown 4 MiB at a time with each step
# filled (131 block groups, most of them 4 MiB: the manybg fixture's recipe;
# the kernel refuses resizes below 256 MiB), then the metadata group filled
# by tests/tools/chunk_torture (items into scratch tree 200, N per
# transaction, until its reservation fails): first reserving from counts
# (N = 20, 10, 5, 3, 2, 1: convert, reserved by rehearsal, still fits), then
# by rehearsal, exactly (N = 64, 32, 16, 8, 4, 2, 1: it fills on until N
# items no longer fit at all). After each fill, convert runs on a copy.
# Faults this guards (found on real images, each failed here first):
# - convert's default batch (1024) committed the conversion mark, then
#   failed its first batch with ENOSPC: half converted, while saying
#   "nothing was written" (manybg fixture). Now a batch whose reservation
#   does not fit is halved until it does, before the first commit; some fill
#   level here must show a conversion completed with a halved batch.
# - with just enough space for the first batch, the run ran out in a later
#   one (121 of 131 groups moved, exit 6, "resumable"; again with exact
#   reservations: 102 of 131, later batches' items spread over more leaves).
#   The first reservation now covers the largest batch of the run (small
#   runs: every batch rehearsed) plus the later batches' growth.
source "$(dirname "$0")/../common/lib.sh"
need_mount
CT=${FSCTL_CHUNK_TORTURE:?FSCTL_CHUNK_TORTURE must point at the chunk_torture test tool}
IMG="$T/full.img"
mkimg "$IMG" 900M -n 4096 -m single -d single -b 256M
mkdir -p "$T/mnt"
mount -o loop "$IMG" "$T/mnt"
trap 'umount "$T/mnt" 2>/dev/null || true' EXIT
for i in $(seq 1 60); do fallocate -l 4M "$T/mnt/d$i" 2>/dev/null || break; done
for i in $(seq 1 300); do fallocate -l 1M "$T/mnt/e$i" 2>/dev/null || break; done
for s in $(seq 1 120); do
  btrfs filesystem resize +4M "$T/mnt" > /dev/null
  for j in 1 2 3 4; do fallocate -l 1M "$T/mnt/g$s.$j" 2>/dev/null || break; done
done
unalloc=$(btrfs filesystem usage -b "$T/mnt" | awk '/Device unallocated:/ { print $3 }')
umount "$T/mnt"
[ "${unalloc:-0}" -lt $((8 << 20)) ] || fail "device space left: $unalloc bytes"
groups=$("$FSCTL" --format json inspect block-groups "$IMG" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["block_groups"]))')
[ "$groups" -ge 100 ] || fail "only $groups block groups"
echo "image: $groups block groups, devices fully allocated"

halved=0 refused=0
for step in 20 10 5 3 2 1 64r 32r 16r 8r 4r 2r 1r; do
  ops=${step%r}
  how=(); [ "$ops" = "$step" ] || how=(--rehearse)
  rc=0
  "$CT" "$IMG" fill --ops "$ops" --new-chunks 5 "${how[@]}" > "$T/fill.out" 2>&1 || rc=$?
  [ $rc -eq 4 ] || { tail -5 "$T/fill.out"; fail "filling metadata $ops items a transaction: exit $rc, expect 4 (ENOSPC once full)"; }
  btrfs check --readonly "$IMG" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check after filling ($ops)"; }
  cp --sparse=always "$IMG" "$T/try.img"
  before=$(img_sum "$T/try.img")
  if [ "$ops" -le 3 ] || [ "$ops" != "$step" ]; then
    rc=0
    "$FSCTL" balance -m "$T/try.img" > "$T/out" 2> "$T/err" || rc=$?
    [ $rc -eq 6 ] && grep_q "not enough metadata space.*nothing was written" < "$T/err" ||
      { cat "$T/err"; fail "balance -m, filled by $step: exit $rc, expect 6 (ENOSPC)"; }
    [ "$(img_sum "$T/try.img")" = "$before" ] || fail "balance -m changed the image (filled by $step)"
  fi
  rc=0
  "$FSCTL" --format json convert --bg-tree "$T/try.img" > "$T/cv.json" 2> "$T/err" || rc=$?
  if [ $rc -eq 6 ]; then
    grep_q "not enough metadata space.*nothing was written" < "$T/err" || { cat "$T/err"; fail "convert, filled by $step: no ENOSPC message"; }
    [ "$(img_sum "$T/try.img")" = "$before" ] || fail "convert --bg-tree failed with ENOSPC but changed the image (filled by $step)"
    echo "filled by $step: convert --bg-tree: $(cat "$T/err")"
    refused=$((refused + 1))
    continue
  fi
  [ $rc -eq 0 ] || { cat "$T/err"; fail "convert --bg-tree, filled by $step: exit $rc (expect 6, or 0 with the conversion done)"; }
  batch=$(python3 - "$T/cv.json" "$step" <<'PY' || fail "convert report, filled by $step"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["state_after"] == "block-group-tree" and r["block_groups_moved"] == r["block_groups_total"], r
assert 1 <= r["batch"] <= 1024 and r["used_bytes"] <= r["reserved_bytes"], r
print(r["batch"])
print(f"filled by {sys.argv[2]}: convert --bg-tree completed with batch {r['batch']} in {r['commits']} commits, reserved {r['reserved_bytes']} used {r['used_bytes']}", file=sys.stderr)
PY
)
  btrfs check --readonly "$T/try.img" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check after converting (filled by $step, batch $batch)"; }
  if [ "$batch" -lt 1024 ]; then
    halved=$((halved + 1))
    # Back on the same nearly full filesystem: done, or refused before any write.
    back=$(img_sum "$T/try.img")
    rc=0
    "$FSCTL" convert --no-bg-tree "$T/try.img" > /dev/null 2> "$T/err" || rc=$?
    if [ $rc -eq 6 ]; then
      grep_q "not enough metadata space.*nothing was written" < "$T/err" || { cat "$T/err"; fail "convert --no-bg-tree, filled by $step: no ENOSPC message"; }
      [ "$(img_sum "$T/try.img")" = "$back" ] || fail "convert --no-bg-tree failed with ENOSPC but changed the image (filled by $step)"
      echo "filled by $step: --no-bg-tree refused before writing: $(cat "$T/err")"
    else
      [ $rc -eq 0 ] || { cat "$T/err"; fail "convert --no-bg-tree (filled by $step): exit $rc"; }
      btrfs check --readonly "$T/try.img" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check after --no-bg-tree (filled by $step)"; }
      echo "filled by $step: --no-bg-tree back, btrfs check clean"
    fi
  fi
done
[ $halved -gt 0 ] || fail "no fill level made convert halve its batch"
[ $refused -gt 0 ] || fail "no fill level made convert refuse with ENOSPC"
echo PASS
