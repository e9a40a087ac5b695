#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/drop.sh: `fsctl rescue finish-drop` against the kernel's own drop of
# the same deleted subvolume (issue 15), in one run, alternating run by run.
#
# Image (made once, cached as $BENCH_DIR/drop-<SNAPS>snap.img): nodesize 4K,
# quota on, subvolume sv with $FILES small files (a quarter with regular
# extents), $SNAPS snapshots of it with 3 files changed in each (the base,
# cached too), then sv deleted with `btrfs subvolume delete` and the
# filesystem frozen at once (fsfreeze) and copied: the deleted, not (or not
# all) dropped state (its ROOT_ITEM refs 0; checked).
#
# Each run on a fresh copy (cp --sparse=always), page cache dropped first:
#   ref (kernel): mount the copy, `btrfs subvolume sync` (waits for the
#      cleaner's drop), then, when the kernel left the qgroups inconsistent,
#      `btrfs quota rescan -w` (the numbers exact again, as fsctl leaves
#      them), unmount: one timed command (wall, CPU of the commands; the
#      kernel threads' CPU is not in it).
#   new (fsctl): `fsctl rescue finish-drop COPY` (the drop and the exact
#      qgroup rescan), timed with its peak RSS.
# After each: btrfs check --readonly --qgroup-report (clean, no "are
# different"). Then min/median/max per tool and the median ratio
# (bench/lib.sh summarize).
#
# Usage: bench/drop.sh [--fsctl PATH] [--runs N] [--snaps N] [--files N] [--nice N]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
RUNS=3
SNAPS=100
FILES=30000
while [ $# -gt 0 ]; do
  case $1 in
    --fsctl) FSCTL=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --snaps) SNAPS=$2; shift 2 ;;
    --files) FILES=$2; shift 2 ;;
    --nice) NICE=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1" ;;
  esac
done
bench_preflight
WORK=$(mktemp -d)
MNT=$WORK/mnt
mkdir -p "$MNT" "$BENCH_DIR"
trap '{ fsfreeze -u "$MNT" 2>/dev/null; mountpoint -q "$MNT" && umount "$MNT"; } || true; rm -rf "$WORK"' EXIT

IMG=$BENCH_DIR/drop-${SNAPS}snap.img
BASE=$BENCH_DIR/drop-${SNAPS}snap-base.img
if [ ! -s "$BASE" ]; then
  build_once "$BASE" bash -c "
    set -e
    truncate -s 4G \"\$PARTIAL\"
    mkfs.btrfs -q -f -n 4096 \"\$PARTIAL\" > /dev/null
    m=\$(mktemp -d)
    mount -o loop \"\$PARTIAL\" \"\$m\"
    btrfs quota enable \"\$m\"
    btrfs subvolume create \"\$m/sv\" > /dev/null
    python3 -c '
import os, sys
for i in range(int(sys.argv[2])):
    with open(\"%s/f%d\" % (sys.argv[1], i), \"wb\") as f: f.write(os.urandom(5000 if i % 4 == 0 else 200))
' \"\$m/sv\" $FILES
    for s in \$(seq 1 $SNAPS); do
      btrfs subvolume snapshot \"\$m/sv\" \"\$m/snap\$s\" > /dev/null
      for j in 1 2 3; do echo \$s > \"\$m/snap\$s/f\$(( (s * 7 + j * 1013) % $FILES ))\"; done
    done
    btrfs quota rescan -w \"\$m\" > /dev/null
    umount \"\$m\"; rmdir \"\$m\""
fi
# The deleted state: sv deleted on a copy of the base, the filesystem frozen
# at once (the freeze commits the deletion; the kernel's cleaner has not
# dropped it, or only part of it) and copied.
if [ ! -s "$IMG" ]; then
  for try in 1 2 3; do
    fresh_copy "$BASE" "$WORK/live.img"
    mount -o loop "$WORK/live.img" "$MNT"
    btrfs subvolume delete "$MNT/sv" > /dev/null
    fsfreeze -f "$MNT"
    cp --sparse=always "$WORK/live.img" "$IMG.partial"
    fsfreeze -u "$MNT"
    umount "$MNT"
    if "$FSCTL" --format json inspect dump-tree -t root "$IMG.partial" | grep -c '"refs":0[,}]' > /dev/null; then
      mv "$IMG.partial" "$IMG"; break
    fi
    rm -f "$IMG.partial"
  done
fi
[ -s "$IMG" ] || die "three tries did not catch the deleted subvolume before the kernel's cleaner dropped it"

REF_LABEL="kernel $(uname -r) cleaner"
set_tools 1
bench_header "reference: the kernel's drop at mount (mount, btrfs subvolume sync, quota rescan -w when left inconsistent, umount)" \
  "fsctl: rescue finish-drop IMG" "image: $IMG ($SNAPS snapshots, $FILES files, $(du -h "$IMG" | cut -f1) allocated)"

cat > "$WORK/kernel.sh" <<KEOF
#!/bin/bash
set -e
mount -o loop "\$1" "$MNT"
btrfs subvolume sync "$MNT" > /dev/null
if btrfs qgroup show "$MNT" 2>&1 | grep -ci inconsistent > /dev/null; then btrfs quota rescan -w "$MNT" > /dev/null; echo rescanned; fi
umount "$MNT"
KEOF
chmod +x "$WORK/kernel.sh"

for run in $(seq 1 "$RUNS"); do
  for tool in $(order_for "$run"); do
    fresh_copy "$IMG" "$WORK/copy.img"
    if [ "$tool" = ref ]; then
      timed "$WORK/out" nice -n "$NICE" "$WORK/kernel.sh" "$WORK/copy.img"
      note=$(grep -c rescanned "$WORK/out" || true)
      note="qgroups rescanned: $note"
    else
      timed "$WORK/out" nice -n "$NICE" "$FSCTL" rescue finish-drop "$WORK/copy.img"
      note=$(grep -o '^freed .*' "$WORK/out" | cut -c1-100 || true)
    fi
    record drop "$tool"
    "$BTRFS" check --readonly --qgroup-report "$WORK/copy.img" > "$WORK/check" 2>&1 && ! grep -q "are different" "$WORK/check" &&
      ok=clean || ok="NOT CLEAN"
    printf 'run %s %-9s exit %s  %6.2f s wall %6.2f s cpu %7s MiB  check %s  %s\n' "$run" "${TOOL_NAME[$tool]}" "$T_RC" \
      "$T_WALL" "$T_CPU" "$T_RSS" "$ok" "$note"
  done
done
summarize drop "drop-${SNAPS}snap" "$REF_LABEL"
bench_footer
