#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/memory.sh: the memory bound of issue 14 ("every command within
# --cache-size + 64 MiB, verification included"), shown by running every
# command under a memory cgroup whose limit is that bound.
#
# For each image, each --cache-size (default: the binary's default, read from
# `fsctl --help`, and 64M) and each command:
#   check             fsctl check --readonly
#   qgroup-verify     fsctl qgroup verify
#   qgroup-show       fsctl qgroup show
#   tree-stats        fsctl inspect tree-stats
#   dump-tree         fsctl inspect dump-tree -t 5 (output to /dev/null)
#   convert           fsctl convert --bg-tree, then --no-bg-tree (two runs,
#                     the larger peak; --no-bg-tree first when the image has
#                     a block group tree)
#   balance           fsctl balance -m (verifies qgroups after the last commit
#                     when quota is on)
#   qgroup-repair     fsctl qgroup verify --repair
# each on its own copy of the image (cp --sparse=always; the read-only
# commands share one), the page cache dropped before it, run in a fresh
# memory cgroup whose limit is the bound (--cache-size + 64 MiB): a command
# that needs more is killed by the kernel (FAIL, "OOM-killed"). Reported per
# command: peak RSS of the process (GNU time %M), the cgroup's peak charge
# (v2 memory.peak, v1 memory.max_usage_in_bytes: RSS plus the page cache the
# command caused, e.g. a spill file; the kernel reclaims that cache before it
# kills), exit code, wall seconds, and PASS when the command succeeded (exit
# 0, or 3 for a verify that finds mismatches) with peak RSS <= bound.
# The cgroup: cgroup v2 when its memory controller is enabled (a child of
# this shell's cgroup with memory.max), else cgroup v1's memory hierarchy (a
# child of this shell's memory cgroup with memory.limit_in_bytes); without
# either the commands run without a limit and only the RSS decides.
#
# Needs root (cgroups, drop_caches; building the many-snapshot image uses a
# loop mount), GNU time, python3, zstd (bg-8T-16k).
#
# Usage: bench/memory.sh [--fsctl PATH] [--cache-sizes "default 64M"]
#                        [--commands "check qgroup-verify ..."] [IMG...]
#   --fsctl PATH        fsctl binary (default: $FSCTL or build/fsctl; a Release build)
#   --cache-sizes LIST  --cache-size values; "default" runs without the option
#   --commands LIST     a subset of the commands above
#   --no-limit          no cgroup limit (measure a binary that would be killed)
#   IMG...              images instead of the default set
# Default images (cached under $FSCTL_BENCH_DIR, default /var/tmp/fsctl-bench,
# never inside the repository):
#   many-snap-400  bench/make-many-snap.sh (400 snapshots of a 15,000-file
#                  subvolume, 30 files changed between snapshots, quota on;
#                  ~4 minutes to build, once)
#   bg-8T-16k      restored from ../shared/bench-images/bg-8T-16k.tar.zst
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
CACHE=$BENCH_DIR/memory
SIZES="default 64M"
COMMANDS="check qgroup-verify qgroup-show tree-stats dump-tree convert balance qgroup-repair"
LIMIT=1
IMGS=()
while [ $# -gt 0 ]; do
  case $1 in
    --fsctl) FSCTL=$2; shift 2 ;;
    --cache-sizes) SIZES=$2; shift 2 ;;
    --commands) COMMANDS=$2; shift 2 ;;
    --no-limit) LIMIT=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) IMGS+=("$1"); shift ;;
  esac
done
bench_preflight

# --- images -------------------------------------------------------------------
many_snap_image() {
  local final=$BENCH_DIR/many-snap-400.img
  build_once "$final" bash -c "'$ROOT/bench/make-many-snap.sh' \"\$PARTIAL\" 400 15000 30"
  echo "$final"
}
if [ ${#IMGS[@]} -eq 0 ]; then
  IMGS=("$(many_snap_image)" "$(restore_bg8t "$BENCH_DIR/bg-8T-16k")")
fi

# --- the cgroup ----------------------------------------------------------------
CG_KIND=none CG_PARENT=
if [ "$LIMIT" = 1 ]; then
  v2=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
  v1=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
  if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
    CG_KIND=v2 CG_PARENT=/sys/fs/cgroup${v2%/}
    # A child gets the memory controller only when its parent delegates it.
    grep -qw memory "$CG_PARENT/cgroup.subtree_control" 2>/dev/null ||
      echo +memory > "$CG_PARENT/cgroup.subtree_control" 2>/dev/null || CG_KIND=none
  elif [ -n "$v1" ] && [ -d "/sys/fs/cgroup/memory$v1" ]; then
    CG_KIND=v1 CG_PARENT=/sys/fs/cgroup/memory${v1%/}
  fi
fi
CG=
cg_make() {  # LIMIT_BYTES: a fresh cgroup in $CG
  CG=
  [ "$CG_KIND" != none ] || return 0
  CG=$CG_PARENT/fsctl-memory-$$-$RANDOM
  mkdir "$CG"
  if [ "$CG_KIND" = v2 ]; then
    echo "$1" > "$CG/memory.max"
    echo 0 > "$CG/memory.swap.max" 2>/dev/null || true
  else
    echo "$1" > "$CG/memory.limit_in_bytes"
  fi
}
cg_peak() {  # bytes charged at most, or "-"
  if [ -z "$CG" ]; then echo -; elif [ "$CG_KIND" = v2 ]; then cat "$CG/memory.peak" 2>/dev/null || echo -
  else cat "$CG/memory.max_usage_in_bytes"; fi
}
cg_ooms() {
  if [ -z "$CG" ]; then echo 0; elif [ "$CG_KIND" = v2 ]; then awk '$1 == "oom_kill" { print $2 }' "$CG/memory.events"
  else awk '$1 == "oom_kill" { print $2 }' "$CG/memory.oom_control"; fi
}
cg_drop() { [ -z "$CG" ] || rmdir "$CG" 2>/dev/null || true; CG=; }

WORK=$(mktemp -d "${CACHE}-work.XXXXXX")
cleanup() { cg_drop; rm -rf "$WORK"; }
trap cleanup EXIT

# --- running one command ---------------------------------------------------------
default_cache() {  # the binary's default --cache-size, as its --help states it
  "$FSCTL" --help 2>/dev/null | sed -n 's/.*--cache-size.*default \([0-9]*[KMG]\).*/\1/p' | head -1 | grep . || echo 256M
}
to_bytes() {
  local v=${1%[KMGkmg]}
  case $1 in *[Kk]) echo $((v << 10)) ;; *[Mm]) echo $((v << 20)) ;; *[Gg]) echo $((v << 30)) ;; *) echo "$1" ;; esac
}
# measure OUT BOUND CMD...: sets M_RC M_RSS (KiB) M_CG (bytes or -) M_OOM M_WALL
measure() {
  local out=$1 bound=$2; shift 2
  drop_caches
  LOADS+=("$(cut -d' ' -f1 /proc/loadavg)")
  cg_make "$bound"
  local t0 t1
  t0=$(now_ns)
  set +e
  if [ -n "$CG" ]; then
    /usr/bin/time -f %M -o "$WORK/rss" sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG" "$@" > "$out" 2>&1
  else
    /usr/bin/time -f %M -o "$WORK/rss" "$@" > "$out" 2>&1
  fi
  M_RC=$?
  set -e
  t1=$(now_ns)
  M_WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  M_RSS=$(grep -E '^[0-9]+$' "$WORK/rss" | tail -1)
  M_CG=$(cg_peak)
  M_OOM=$(cg_ooms)
  cg_drop
}

LOADS=()
ROWS=()
echo "# bench/memory.sh $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), nproc $(nproc), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, kernel $(uname -r)"
echo "# load average before: $(loadavg) (1/5/15 min)"
echo "# fsctl: $(fsctl_describe "$FSCTL"); default --cache-size $(default_cache)"
echo "# limit: $([ "$CG_KIND" = none ] && echo "none (no usable memory cgroup; RSS only)" || echo "memory cgroup $CG_KIND under $CG_PARENT, limit = bound")"
echo "# bound: --cache-size + 64 MiB; RSS = peak resident set (GNU time), cgroup = peak charge incl. page cache"
printf '%-16s %-7s %-14s %9s %9s %9s %4s %8s  %s\n' image cache command "bound MiB" "RSS MiB" "cg MiB" rc "wall s" verdict

run_command() {  # IMAGE_NAME SIZE BOUND COMMAND SRC
  local name=$1 size=$2 bound=$3 cmd=$4 src=$5 copy=$WORK/copy.img opt=() out=$WORK/out rss=0 cg=- rc=0 wall=0 verdict
  [ "$size" = default ] || opt=(--cache-size "$size")
  case $cmd in
    check|qgroup-verify|qgroup-show|tree-stats|dump-tree) copy=$WORK/ro.img; [ -s "$copy" ] || fresh_copy "$src" "$copy" ;;
    *) fresh_copy "$src" "$copy" ;;
  esac
  local runs=()
  case $cmd in
    check) runs=("check --readonly") ;;
    qgroup-verify) runs=("qgroup verify") ;;
    qgroup-show) runs=("qgroup show") ;;
    tree-stats) runs=("inspect tree-stats") ;;
    dump-tree) runs=("inspect dump-tree -t 5") ;;
    convert)
      if grep -q BLOCK_GROUP_TREE < <("$FSCTL" inspect dump-super "$copy" 2>/dev/null); then
        runs=("convert --no-bg-tree" "convert --bg-tree")
      else
        runs=("convert --bg-tree" "convert --no-bg-tree")
      fi ;;
    balance) runs=("balance -m") ;;
    qgroup-repair) runs=("qgroup verify --repair") ;;
  esac
  local r ok=1 worst_rc=0 oom=0
  for r in "${runs[@]}"; do
    # shellcheck disable=SC2086
    measure "$out" "$bound" "$FSCTL" "${opt[@]}" $r "$copy"
    [ "${M_RSS:-0}" -le "$rss" ] || rss=$M_RSS
    if [ "$M_CG" != - ] && { [ "$cg" = - ] || [ "$M_CG" -gt "$cg" ]; }; then cg=$M_CG; fi
    wall=$(awk -v a="$wall" -v b="$M_WALL" 'BEGIN { print a + b }')
    [ "${M_OOM:-0}" = 0 ] || oom=1
    case $M_RC in
      0) ;;
      3) [[ $cmd == qgroup-verify || $cmd == check ]] || ok=0 ;;
      *) ok=0 ;;
    esac
    [ "$M_RC" = 0 ] || worst_rc=$M_RC
    if [ "$M_RC" != 0 ] && [ "$M_RC" != 3 ]; then tail -3 "$out" | sed "s/^/  [$cmd] /" >&2; fi
  done
  [ "$cmd" != dump-tree ] || : > "$out"
  if [ "$oom" = 1 ]; then verdict="FAIL (OOM-killed)"
  elif [ "$ok" = 0 ]; then verdict="FAIL (exit $worst_rc)"
  elif [ $((rss * 1024)) -gt "$bound" ]; then verdict="FAIL (RSS over the bound)"
  else verdict=PASS; fi
  local cgm=-
  [ "$cg" = - ] || cgm=$(awk -v b="$cg" 'BEGIN { printf "%.1f", b / 1048576 }')
  local line
  line=$(printf '%-16s %-7s %-14s %9d %9.1f %9s %4s %8s  %s' "$name" "$size" "$cmd" $((bound >> 20)) \
    "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$cgm" "$worst_rc" "$wall" "$verdict")
  echo "$line"
  ROWS+=("$line")
}

FAILS=0
for img in "${IMGS[@]}"; do
  img=$(readlink -f "$img")
  name=$(basename "$img" .img)
  [ "$name" != huge ] || name=$(basename "$(dirname "$img")")
  for size in $SIZES; do
    if [ "$size" = default ]; then cs=$(default_cache); else cs=$size; fi
    bound=$(( $(to_bytes "$cs") + (64 << 20) ))
    for cmd in $COMMANDS; do
      run_command "$name" "$size" "$bound" "$cmd" "$img"
      [[ ${ROWS[-1]} == *PASS ]] || FAILS=$((FAILS + 1))
    done
    rm -f "$WORK/ro.img" "$WORK/copy.img"
  done
done
lo=$(printf '%s\n' "${LOADS[@]}" | sort -g | head -1)
hi=$(printf '%s\n' "${LOADS[@]}" | sort -g | tail -1)
echo "# load average after: $(loadavg); 1-min load at the ${#LOADS[@]} measured runs: $lo-$hi; script ran $((SECONDS - BENCH_T0)) s"
echo "# $FAILS of ${#ROWS[@]} over the bound or failed"
[ "$FAILS" = 0 ]
