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
# Those steps are coarse: "until N items no longer fit" leaves anywhere
# below the cost of N random items free, and whether one lands between
# "the whole run fits one batch" and "no batch fits" depends on the
# kernel's layout of the image (CI on 88d7cc7: 8r still batch 1024, 4r
# already refused). So when no coarse level halved the batch, the test goes
# back to the last level that converted with batch 1024 and fills on in
# one-item transactions (16 a step, the step halved and retried whenever it
# overshoots into "refused"), asking `convert --dry-run` (which rehearses
# like the real run) after each step, until the batch is no longer 1024:
# then a real convert on a copy must complete with that halved batch. One
# item taking convert from batch 1024 straight to refused would be a
# finding (no batch between fits), and fails.
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
# try_convert LABEL: convert --bg-tree on a copy of $IMG; sets $outcome to
# "refused" (exit 6, image unchanged) or to the batch it completed with
# (btrfs check clean; a halved batch then also goes back with --no-bg-tree).
try_convert() {
  local label=$1 rc=0 before back
  cp --sparse=always "$IMG" "$T/try.img"
  before=$(img_sum "$T/try.img")
  "$FSCTL" --format json convert --bg-tree "$T/try.img" > "$T/cv.json" 2> "$T/err" || rc=$?
  if [ $rc -eq 6 ]; then
    grep_q "not enough metadata space.*nothing was written" < "$T/err" || { cat "$T/err"; fail "convert, filled by $label: no ENOSPC message"; }
    [ "$(img_sum "$T/try.img")" = "$before" ] || fail "convert --bg-tree failed with ENOSPC but changed the image (filled by $label)"
    echo "filled by $label: convert --bg-tree: $(cat "$T/err")"
    refused=$((refused + 1))
    outcome=refused
    return
  fi
  [ $rc -eq 0 ] || { cat "$T/err"; fail "convert --bg-tree, filled by $label: exit $rc (expect 6, or 0 with the conversion done)"; }
  outcome=$(python3 - "$T/cv.json" "$label" <<'PY' || fail "convert report, filled by $label"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["state_after"] == "block-group-tree" and r["block_groups_moved"] == r["block_groups_total"], r
assert 1 <= r["batch"] <= 1024 and r["used_bytes"] <= r["reserved_bytes"], r
print(r["batch"])
print(f"filled by {sys.argv[2]}: convert --bg-tree completed with batch {r['batch']} in {r['commits']} commits, reserved {r['reserved_bytes']} used {r['used_bytes']}", file=sys.stderr)
PY
)
  [[ "$outcome" =~ ^[0-9]+$ ]] || fail "convert report, filled by $label: no batch"
  btrfs check --readonly "$T/try.img" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check after converting (filled by $label, batch $outcome)"; }
  [ "$outcome" -lt 1024 ] || return 0
  halved=$((halved + 1))
  # Back on the same nearly full filesystem: done, or refused before any write.
  back=$(img_sum "$T/try.img")
  rc=0
  "$FSCTL" convert --no-bg-tree "$T/try.img" > /dev/null 2> "$T/err" || rc=$?
  if [ $rc -eq 6 ]; then
    grep_q "not enough metadata space.*nothing was written" < "$T/err" || { cat "$T/err"; fail "convert --no-bg-tree, filled by $label: no ENOSPC message"; }
    [ "$(img_sum "$T/try.img")" = "$back" ] || fail "convert --no-bg-tree failed with ENOSPC but changed the image (filled by $label)"
    echo "filled by $label: --no-bg-tree refused before writing: $(cat "$T/err")"
  else
    [ $rc -eq 0 ] || { cat "$T/err"; fail "convert --no-bg-tree (filled by $label): exit $rc"; }
    btrfs check --readonly "$T/try.img" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check after --no-bg-tree (filled by $label)"; }
    echo "filled by $label: --no-bg-tree back, btrfs check clean"
  fi
}

full_saved=0
for step in 20 10 5 3 2 1 64r 32r 16r 8r 4r 2r 1r; do
  ops=${step%r}
  how=(); [ "$ops" = "$step" ] || how=(--rehearse)
  rc=0
  "$CT" "$IMG" fill --ops "$ops" --new-chunks 5 "${how[@]}" > "$T/fill.out" 2>&1 || rc=$?
  [ $rc -eq 4 ] || { tail -5 "$T/fill.out"; fail "filling metadata $ops items a transaction: exit $rc, expect 4 (ENOSPC once full)"; }
  btrfs check --readonly "$IMG" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check after filling ($ops)"; }
  if [ "$ops" -le 3 ] || [ "$ops" != "$step" ]; then
    cp --sparse=always "$IMG" "$T/try.img"
    before=$(img_sum "$T/try.img")
    rc=0
    "$FSCTL" balance -m "$T/try.img" > "$T/out" 2> "$T/err" || rc=$?
    [ $rc -eq 6 ] && grep_q "not enough metadata space.*nothing was written" < "$T/err" ||
      { cat "$T/err"; fail "balance -m, filled by $step: exit $rc, expect 6 (ENOSPC)"; }
    [ "$(img_sum "$T/try.img")" = "$before" ] || fail "balance -m changed the image (filled by $step)"
  fi
  try_convert "$step"
  if [ "$outcome" = 1024 ]; then cp --sparse=always "$IMG" "$T/lastfull.img"; full_saved=1; fi
done

if [ $halved -eq 0 ]; then
  [ $full_saved -eq 1 ] || fail "no fill level converted with batch 1024, none halved it"
  # From the last level at batch 1024: fill S one-item transactions, ask
  # the dry run; on "refused" go back to before the step and halve S, so
  # the window is found at one-item granularity in a few dozen steps.
  echo "no coarse level halved the batch: filling on from the last level at batch 1024"
  cp --sparse=always "$T/lastfull.img" "$IMG"
  s=16 k=0
  while [ $halved -eq 0 ]; do
    k=$((k + 1))
    [ $k -le 200 ] || fail "fine fill: 200 steps without leaving batch 1024"
    cp --sparse=always "$IMG" "$T/prev.img"
    frc=0
    "$CT" "$IMG" fill --ops 1 --transactions "$s" --new-chunks 5 --rehearse > "$T/fill.out" 2>&1 || frc=$?
    [ $frc -eq 0 ] || [ $frc -eq 4 ] || { tail -5 "$T/fill.out"; fail "fine fill step $k: exit $frc, expect 0 or 4"; }
    rc=0
    "$FSCTL" --format json convert --bg-tree --dry-run "$IMG" > "$T/dry.json" 2> "$T/err" || rc=$?
    if [ $rc -eq 6 ]; then
      grep_q "not enough metadata space" < "$T/err" || { cat "$T/err"; fail "convert --dry-run, fine step $k: no ENOSPC message"; }
      [ "$s" -gt 1 ] || { cat "$T/err"; fail "fine fill step $k: one more item took convert from batch 1024 straight to refused (no batch between fits)"; }
      echo "fine step $k ($s transactions): refused; back one step, half the step"
      cp --sparse=always "$T/prev.img" "$IMG"
      s=$((s / 2))
      continue
    fi
    [ $rc -eq 0 ] || { cat "$T/err"; fail "convert --bg-tree --dry-run, fine step $k: exit $rc"; }
    b=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["batch"])' "$T/dry.json")
    if [ "$b" -lt 1024 ]; then
      echo "fine step $k ($s transactions): convert --dry-run says batch $b"
      try_convert "fine step $k"
      [ "$outcome" = "$b" ] || fail "fine step $k: the dry run said batch $b, the real convert: $outcome"
    else
      [ $frc -eq 0 ] || fail "fine step $k: metadata full (one item does not fit) and convert --dry-run still at batch 1024"
    fi
  done
fi
[ $halved -gt 0 ] || fail "no fill level made convert halve its batch"
[ $refused -gt 0 ] || fail "no fill level made convert refuse with ENOSPC"
echo PASS
