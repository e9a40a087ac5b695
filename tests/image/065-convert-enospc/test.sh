#!/usr/bin/env bash
# 065-convert-enospc: on a filesystem whose devices are fully allocated and
# whose metadata is nearly full, `fsctl convert --bg-tree` (and `fsctl
# balance -m`) fail with ENOSPC (exit 6, "nothing was written") before any
# write — not a half-done conversion — and the image is byte-identical.
# The image: 300 MiB, single profiles, data chunks preallocated by the kernel
# until no device space is left, then the metadata group filled by
# tests/tools/chunk_torture (items into scratch tree 200, 20 per
# transaction) until its own reservation fails.
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
before=$(sha256sum < "$IMG")
for cmd in "convert --bg-tree" "balance -m"; do
  rc=0
  "$FSCTL" $cmd "$IMG" > "$T/out" 2> "$T/err" || rc=$?
  [ $rc -eq 6 ] || { cat "$T/err"; fail "fsctl $cmd: exit $rc, expect 6 (ENOSPC)"; }
  grep -q "not enough metadata space.*nothing was written" "$T/err" || { cat "$T/err"; fail "fsctl $cmd: no ENOSPC message"; }
  [ "$(sha256sum < "$IMG")" = "$before" ] || fail "fsctl $cmd changed the image"
  echo "fsctl $cmd: $(cat "$T/err")"
done
echo PASS
