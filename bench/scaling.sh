#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/scaling.sh: how time and memory grow with the snapshot count
# (issue 14: "from 100 to 400 to 1,600 snapshots, plotted").
#
# For each snapshot count N (default 100 400 1600) the many-snapshot image of
# bench/make-many-snap.sh (a 15,000-file subvolume, quota enabled before the
# snapshots, 30 files changed between snapshots; built once and cached as
# $BENCH_DIR/many-snap-N.img, never inside the repository), then, caches
# dropped before every timed command (bench/lib.sh `timed`):
#   fsctl qgroup verify IMG                        RUNS runs (median)
#   fsctl balance -m COPY (a fresh sparse copy)    RUNS runs (median)
#   btrfs check --readonly --qgroup-report IMG     REF_RUNS runs, the btrfs of
#                                                  --progs (not measured without it)
#   the kernel's btrfs balance start -m MNT        REF_RUNS runs, on a fresh
#                                                  copy mounted through a loop
#                                                  device, plus the sync after it
# Each fsctl run's own count of tree blocks (verify: stats.tree_blocks walked;
# balance: tree_blocks_copied) gives the time per tree block; the balance's
# result is checked (btrfs check --readonly, exit 0 of a following fsctl
# qgroup verify). Printed: one table line per image and job, then whether
# time per tree block stays flat from the smallest to the largest image
# ("no faster than linear": the largest image's microseconds per tree block
# at most 1.25x the smallest's), and the plot.
#
# Output files (--out DIR, default bench/): scaling.dat (the table, gnuplot's
# format) and scaling.svg (gnuplot from Debian's gnuplot-nox, installed when
# missing and root: time per tree block and peak RSS against snapshots, and
# wall time against tree blocks).
#
# Usage: bench/scaling.sh [--fsctl PATH] [--progs DIR] [--runs N]
#                         [--ref-runs N] [--snaps "100 400 1600"] [--out DIR]
#        bench/scaling.sh --replot DAT [--out DIR]   (the summary and the plot
#                         of an earlier run's scaling.dat, nothing measured)
# Needs root (loop mounts, drop_caches), GNU time, python3. Building the
# images took 78 s, 568 s and 6,034 s on a 2-vCPU AMD EPYC (2026-12-04).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
SNAPS_LIST="100 400 1600"
RUNS=3
REF_RUNS=1
OUT=$ROOT/bench
REPLOT=
while [ $# -gt 0 ]; do
  case $1 in
    --fsctl) FSCTL=$2; shift 2 ;;
    --progs) PROGS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --ref-runs) REF_RUNS=$2; shift 2 ;;
    --snaps) SNAPS_LIST=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --replot) REPLOT=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
bench_preflight
WORK=$(mktemp -d "$BENCH_DIR/scaling.XXXXXX")
MNT=$WORK/mnt
mkdir -p "$MNT" "$OUT"
LOOP=
cleanup() {
  if mountpoint -q "$MNT"; then umount "$MNT" || true; fi
  if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
REF_BTRFS=
if [ -x "$PROGS/btrfs" ]; then REF_BTRFS=$PROGS/btrfs; fi
TOOLS=(fsctl)
bench_header "images: bench/make-many-snap.sh N 15000 30 (nodesize 16K), N in: $SNAPS_LIST" \
  "fsctl: $RUNS runs per job; references: $REF_RUNS run(s) each: check $(if [ -n "$REF_BTRFS" ]; then echo "$REF_BTRFS ($("$REF_BTRFS" --version | head -1))"; else echo "not measured (no $PROGS/btrfs)"; fi), kernel balance $(uname -r)"

json_field() {  # FILE PYTHON-EXPR over j
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

DAT=$WORK/scaling.dat
echo "# snapshots tree_blocks_walked verify_s verify_rss_mib verify_us_per_block tree_blocks_copied balance_s balance_rss_mib balance_us_per_block check_s check_rss_mib kernel_balance_s" > "$DAT"
if [ -n "$REPLOT" ]; then
  cp "$REPLOT" "$DAT"
  SNAPS_LIST=
  echo "replot of $REPLOT: nothing measured"
fi
printf '%-6s %-22s %6s %10s %9s %9s %12s %9s\n' snaps job runs "tree blks" "med s" "cpu s" "us/block" "RSS MiB"
for n in $SNAPS_LIST; do
  img=$BENCH_DIR/many-snap-$n.img
  build_once "$img" bash -c "'$ROOT/bench/make-many-snap.sh' \"\$PARTIAL\" $n 15000 30"
  # fsctl qgroup verify
  walls=() cpus=() rss=0 blocks=0
  for ((r = 1; r <= RUNS; r++)); do
    timed "$WORK/verify.json" nice -n "$NICE" "$FSCTL" --format json qgroup verify "$img"
    [ "$T_RC" = 0 ] || { cat "$WORK/verify.json"; die "many-snap-$n: fsctl qgroup verify exit $T_RC"; }
    walls+=("$T_WALL") cpus+=("$T_CPU")
    rss=$(awk -v a="$rss" -v b="$T_RSS" 'BEGIN { print (b > a) ? b : a }')
    blocks=$(json_field "$WORK/verify.json" 'j["stats"]["tree_blocks"]')
  done
  v_s=$(median "${walls[@]}") v_cpu=$(median "${cpus[@]}") v_rss=$rss v_blocks=$blocks
  v_us=$(awk -v s="$v_s" -v b="$v_blocks" 'BEGIN { printf "%.2f", 1e6 * s / b }')
  printf '%-6s %-22s %6s %10s %9s %9s %12s %9s\n' "$n" "fsctl qgroup verify" "$RUNS" "$v_blocks" "$v_s" "$v_cpu" "$v_us" "$v_rss"
  # fsctl balance -m
  walls=() cpus=() rss=0 blocks=0
  for ((r = 1; r <= RUNS; r++)); do
    fresh_copy "$img" "$WORK/copy.img"
    timed "$WORK/balance.json" nice -n "$NICE" "$FSCTL" --format json balance -m "$WORK/copy.img"
    [ "$T_RC" = 0 ] || { cat "$WORK/balance.json"; die "many-snap-$n: fsctl balance -m exit $T_RC"; }
    walls+=("$T_WALL") cpus+=("$T_CPU")
    rss=$(awk -v a="$rss" -v b="$T_RSS" 'BEGIN { print (b > a) ? b : a }')
    blocks=$(json_field "$WORK/balance.json" 'j["tree_blocks_copied"]')
    dirty=$(json_field "$WORK/balance.json" 'j["qgroup_dirty_extents"]')
    [ "$dirty" = 0 ] || die "many-snap-$n: balance left $dirty qgroup dirty extents"
    "$BTRFS" check --readonly "$WORK/copy.img" > "$WORK/check.out" 2>&1 || { cat "$WORK/check.out"; die "many-snap-$n: btrfs check after fsctl balance"; }
    "$FSCTL" qgroup verify "$WORK/copy.img" > "$WORK/verify.out" 2>&1 || { cat "$WORK/verify.out"; die "many-snap-$n: qgroups after fsctl balance"; }
  done
  b_s=$(median "${walls[@]}") b_cpu=$(median "${cpus[@]}") b_rss=$rss b_blocks=$blocks
  b_us=$(awk -v s="$b_s" -v b="$b_blocks" 'BEGIN { printf "%.2f", 1e6 * s / b }')
  printf '%-6s %-22s %6s %10s %9s %9s %12s %9s\n' "$n" "fsctl balance -m" "$RUNS" "$b_blocks" "$b_s" "$b_cpu" "$b_us" "$b_rss"
  # btrfs check --qgroup-report (the reference for verify)
  c_s=nan c_rss=nan
  if [ -n "$REF_BTRFS" ] && [ "$REF_RUNS" -gt 0 ]; then
    walls=() rss=0
    for ((r = 1; r <= REF_RUNS; r++)); do
      timed "$WORK/check.out" nice -n "$NICE" "$REF_BTRFS" check --readonly --qgroup-report "$img"
      [ "$T_RC" = 0 ] || { tail -20 "$WORK/check.out"; die "many-snap-$n: btrfs check exit $T_RC"; }
      walls+=("$T_WALL")
      rss=$(awk -v a="$rss" -v b="$T_RSS" 'BEGIN { print (b > a) ? b : a }')
    done
    c_s=$(median "${walls[@]}") c_rss=$rss
    printf '%-6s %-22s %6s %10s %9s %9s %12s %9s\n' "$n" "btrfs check --qgroup" "$REF_RUNS" - "$c_s" - - "$c_rss"
  else
    printf '%-6s %-22s %6s %10s %9s\n' "$n" "btrfs check --qgroup" - - "not measured"
  fi
  # the kernel's balance
  k_s=nan
  if [ "$REF_RUNS" -gt 0 ]; then
    walls=()
    for ((r = 1; r <= REF_RUNS; r++)); do
      fresh_copy "$img" "$WORK/copy.img"
      LOOP=$(losetup -f --show "$WORK/copy.img")
      mount -o noatime "$LOOP" "$MNT"
      timed "$WORK/kbal.out" nice -n "$NICE" "$BTRFS" balance start -m "$MNT"
      [ "$T_RC" = 0 ] || { cat "$WORK/kbal.out"; die "many-snap-$n: kernel balance exit $T_RC"; }
      k_wall=$T_WALL
      t0=$(now_ns)
      "$BTRFS" filesystem sync "$MNT"
      k_wall=$(awk -v a="$k_wall" -v t0="$t0" -v t1="$(now_ns)" 'BEGIN { printf "%.3f", a + (t1 - t0) / 1e9 }')
      umount "$MNT"
      losetup -d "$LOOP"
      LOOP=
      walls+=("$k_wall")
    done
    k_s=$(median "${walls[@]}")
    printf '%-6s %-22s %6s %10s %9s\n' "$n" "kernel balance -m" "$REF_RUNS" - "$k_s"
  fi
  echo "$n $v_blocks $v_s $v_rss $v_us $b_blocks $b_s $b_rss $b_us $c_s $c_rss $k_s" >> "$DAT"
done
rm -f "$WORK/copy.img"

# Linear or not: microseconds per tree block, largest image against smallest.
python3 - "$DAT" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
if len(rows) < 2:
    print("linearity: needs two images or more"); sys.exit(0)
lo, hi = rows[0], rows[-1]
for name, col in (("qgroup verify", 4), ("balance -m", 8)):
    r = float(hi[col]) / float(lo[col])
    print("linearity: fsctl %s: %s us per tree block at %s snapshots, %s at %s (x%.2f) -> no faster than linear (<= 1.25x): %s"
          % (name, lo[col], lo[0], hi[col], hi[0], r, "met" if r <= 1.25 else "MISSED"))
for name, col, blk in (("btrfs check --qgroup-report", 9, 1), ("kernel balance -m", 11, 5)):
    if lo[col] == "nan" or hi[col] == "nan":
        continue
    a = float(lo[col]) / float(lo[blk]) * 1e6
    b = float(hi[col]) / float(hi[blk]) * 1e6
    print("reference: %s: %.2f us per tree block at %s snapshots, %.2f at %s (x%.2f)" % (name, a, lo[0], b, hi[0], b / a))
PY
cp "$DAT" "$OUT/scaling.dat"
if ! command -v gnuplot > /dev/null && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnuplot-nox > /dev/null 2>&1 || true
fi
if command -v gnuplot > /dev/null; then
  gnuplot <<GP
set terminal svg size 1200,420 dynamic font "sans,11"
set output "$OUT/scaling.svg"
set multiplot layout 1,3 title "fsctl on many-snap-N (bench/scaling.sh, $(date -u '+%Y-%m-%d'), $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), nproc $(nproc))"
set logscale x 2
set xlabel "snapshots"
set key top left
set grid
set ylabel "microseconds per tree block"
set yrange [0:*]
plot "$OUT/scaling.dat" using 1:5 with linespoints title "qgroup verify", \
     "" using 1:9 with linespoints title "balance -m"
set ylabel "peak RSS (MiB)"
plot "$OUT/scaling.dat" using 1:4 with linespoints title "qgroup verify", \
     "" using 1:8 with linespoints title "balance -m", \
     "" using 1:11 with linespoints title "btrfs check --qgroup-report"
unset logscale x
set xlabel "tree blocks"
set ylabel "wall seconds"
plot "$OUT/scaling.dat" using 2:3 with linespoints title "fsctl qgroup verify", \
     "" using 2:10 with linespoints title "btrfs check --qgroup-report", \
     "" using 6:7 with linespoints title "fsctl balance -m", \
     "" using 6:12 with linespoints title "kernel balance -m"
unset multiplot
GP
  echo "plot: $OUT/scaling.svg, data: $OUT/scaling.dat"
else
  echo "plot: not made (no gnuplot; apt-get install gnuplot-nox), data: $OUT/scaling.dat"
fi
bench_footer
