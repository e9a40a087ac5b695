#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/qgroup.sh: `fsctl qgroup verify IMG` against `btrfs check --readonly
# --qgroup-report IMG` on the benchmark images of issue 3, in one run.
#
# For each image, the page cache is dropped before each timed command
# (sync; echo 3 > /proc/sys/vm/drop_caches), then both tools are timed with
# /usr/bin/time -v: wall time and peak RSS. The script prints them side by
# side with the speed-up (check / fsctl) and the RSS ratio (fsctl / check),
# whether both tools agree, and whether the targets are met:
#   fsctl at least 5x faster than btrfs check, at most 1/4 of its peak RSS.
# "agree" means: the verdicts match (fsctl exit 0 <=> check reports no qgroup
# "are different"), and every qgroup check prints has the same computed
# referenced/exclusive numbers in `fsctl --format json qgroup verify` (that
# JSON run is not timed). When check prints no counts at all (btrfs-progs 6.2
# on a quota tree of several leaves) agree is "n/a" and fsctl's exit code says
# whether it matches the kernel's on-disk numbers.
#
# Needs root (drop_caches; building images uses a loop mount), btrfs-progs,
# GNU time, zstd, tar, python3.
#
# Usage: bench/qgroup.sh [--fsctl PATH] [--btrfs PATH] [--runs N] [--no-64] [IMG...]
#   --fsctl PATH   fsctl binary (default: $FSCTL or build/fsctl); use a Release build
#   --btrfs PATH   btrfs binary (default: btrfs on PATH)
#   --runs N       repeat the measurement of every image N times (default 1)
#   --no-64        skip the 64-snapshot image
#   IMG...         measure these images instead of the default set
# Default images (cached under $FSCTL_BENCH_DIR, default /var/tmp/fsctl-bench,
# made on first use, never inside the repository):
#   bg-8T-16k         restored from ../shared/bench-images/bg-8T-16k.tar.zst
#   balance-16snap-4k make-balance-16snap-4k.sh OUT.img      (16 snapshots)
#   balance-64snap-4k make-balance-16snap-4k.sh OUT.img 64   (64 snapshots)
# A finished $FSCTL_BENCH_DIR/NAME.img (logged in its build.log; shared with
# bench/walk.sh and bench/balance.sh) or $FSCTL_BENCH_DIR/qgroup/NAME.img is
# reused; otherwise the image is built into $FSCTL_BENCH_DIR/NAME.img under a
# lock into a temporary name and renamed when complete (make_snap_image,
# bench/lib.sh). bg-8T-16k is restored into $FSCTL_BENCH_DIR/qgroup/.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
CACHE=$BENCH_DIR/qgroup
RUNS=1
WITH64=1
IMGS=()

while [ $# -gt 0 ]; do
  case $1 in
    --fsctl) FSCTL=$2; shift 2 ;;
    --btrfs) BTRFS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --no-64) WITH64=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) IMGS+=("$1"); shift ;;
  esac
done

bench_preflight

# --- images -----------------------------------------------------------------
# build_once, restore_bg8t DIR, make_snap_image NAME SNAPS: bench/lib.sh
mkdir -p "$CACHE"

if [ ${#IMGS[@]} -eq 0 ]; then
  IMGS+=("$(restore_bg8t "$CACHE/bg-8T-16k")")
  IMGS+=("$(make_snap_image balance-16snap-4k 16)")
  [ "$WITH64" = 1 ] && IMGS+=("$(make_snap_image balance-64snap-4k 64)")
fi
for img in "${IMGS[@]}"; do [ -s "$img" ] || die "no image $img"; done

label_of() {
  case $1 in
    */bg-8T-16k/huge.img|*/huge.img) echo bg-8T-16k ;;
    *) basename "$1" .img ;;
  esac
}

# --- measurement ------------------------------------------------------------
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# qgroup_timed OUT CMD...: sets T_WALL (s, 2 decimals), T_RSS (KiB), T_RC
# (simpler than bench/lib.sh's timed: no run-queue wait)
qgroup_timed() {
  local out=$1; shift
  drop_caches
  set +e
  /usr/bin/time -v -o "$WORK/time" "$@" > "$out" 2>&1
  T_RC=$?
  set -e
  T_WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ {
    n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s }' "$WORK/time")
  T_RSS=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$WORK/time")
  # /usr/bin/time reports the command's exit status in its own output too
  if grep -q 'Command exited with non-zero status' "$WORK/time"; then
    T_RC=$(awk '/Command exited with non-zero status/ { print $NF }' "$WORK/time")
  fi
}

# compare FSCTL_JSON CHECK_OUT FSCTL_RC: prints "yes ..." or "NO ..."
compare() {
  python3 - "$@" <<'EOF'
import json, re, sys
fj, co, frc = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    data = json.load(open(fj))
    ours = {q["qgroupid"]: q["computed"] for q in data.get("qgroups", [])}
except Exception as e:
    print("NO (fsctl json unreadable: %s)" % e); sys.exit()
check, cur, different = {}, None, []
for line in open(co, errors="replace"):
    m = re.match(r"Counts for qgroup id: (\d+/\d+)\s*(are different)?", line)
    if m:
        cur = m.group(1); check[cur] = {}
        if m.group(2): different.append(cur)
        continue
    m = re.match(r"our:\s+(referenced|exclusive) (\d+)", line)
    if m and cur: check[cur][m.group(1)] = int(m.group(2))
if not check:
    # btrfs-progs 6.2 reads only part of a quota tree that spans several
    # leaves and then prints no counts at all: nothing to compare with.
    print("n/a (btrfs check printed no qgroup counts, verified nothing; fsctl exit %d = %s the on-disk items)"
          % (frc, "matches" if frc == 0 else "differs from"))
    sys.exit()
bad = []
for q, c in check.items():
    f = ours.get(q)
    if f is None: bad.append(q + " missing in fsctl"); continue
    for k in ("referenced", "exclusive"):
        if k in c and c[k] != f[k]:
            bad.append("%s %s fsctl %d check %d" % (q, k, f[k], c[k]))
fsctl_says_ok = frc == 0
check_says_ok = not different
verdict = "both ok" if fsctl_says_ok and check_says_ok else (
    "both: differs %s" % ",".join(different) if not fsctl_says_ok and not check_says_ok else
    "fsctl rc %d, check different: %s" % (frc, ",".join(different) or "none"))
if bad or fsctl_says_ok != check_says_ok:
    print("NO (%s; %s)" % (verdict, "; ".join(bad[:5]) or "numbers equal"))
else:
    print("yes (%s; %d qgroups, same computed numbers)" % (verdict, len(check)))
EOF
}

bench_header
echo "# caches dropped before each timed command; wall s / peak RSS MiB from /usr/bin/time -v"
echo

echo "images:"
for img in "${IMGS[@]}"; do
  label=$(label_of "$img")
  "$FSCTL" qgroup verify "$img" > "$WORK/info" 2>&1 || true
  summary=$(grep -o 'verified .*mismatched' "$WORK/info" | sed 's/ in [0-9.]* s//' || true)
  "$FSCTL" inspect tree-stats "$img" > "$WORK/stats" 2>&1 || true
  meta=$(grep -o 'unique tree blocks [0-9]* ([0-9]* bytes)' "$WORK/stats" || true)
  nodesize=$("$BTRFS" inspect-internal dump-super "$img" 2>/dev/null | awk '$1 == "nodesize" {print $2}')
  printf '%-20s nodesize %s; %s; %s\n' "$label" "$nodesize" "${summary:-?}" "${meta:-?}"
  printf '%-20s %s (%s allocated)\n' "" "$img" "$(du -h "$img" | cut -f1)"
done
echo

fmt='%-20s %4s | %8s %8s %8s | %9s %9s %7s | %-8s %-8s | %s\n'
printf "$fmt" image run "fsctl s" "check s" speedup "fsctl MiB" "check MiB" "RSS" "5x" "RSS<=1/4" agree
printf "$fmt" "" "" "" "" "" "" "" "ratio" "faster" "" ""
ALL_MET=1
for img in "${IMGS[@]}"; do
  label=$(label_of "$img")
  for run in $(seq 1 "$RUNS"); do
    qgroup_timed "$WORK/fsctl.out" "$FSCTL" qgroup verify "$img"
    f_wall=$T_WALL f_rss=$T_RSS f_rc=$T_RC
    qgroup_timed "$WORK/check.out" "$BTRFS" check --readonly --qgroup-report "$img"
    c_wall=$T_WALL c_rss=$T_RSS c_rc=$T_RC
    "$FSCTL" --format json qgroup verify "$img" > "$WORK/fsctl.json" 2>/dev/null || true
    agree=$(compare "$WORK/fsctl.json" "$WORK/check.out" "$f_rc")
    read -r speed rssr t_speed t_rss < <(awk -v fw="$f_wall" -v cw="$c_wall" -v fr="$f_rss" -v cr="$c_rss" 'BEGIN {
      s = (fw > 0) ? cw / fw : 999; r = fr / cr;
      printf "%.1fx %.3f %s %s\n", s, r, (s >= 5 ? "met" : "MISSED"), (r <= 0.25 ? "met" : "MISSED") }')
    [ "$t_speed" = met ] && [ "$t_rss" = met ] || ALL_MET=0
    printf "$fmt" "$label" "$run" "$f_wall" "$c_wall" "$speed" \
      "$(awk -v k="$f_rss" 'BEGIN{printf "%.1f", k/1024}')" "$(awk -v k="$c_rss" 'BEGIN{printf "%.1f", k/1024}')" \
      "$rssr" "$t_speed" "$t_rss" "$agree"
    printf '%-20s      exit codes: fsctl %s, check %s\n' "" "$f_rc" "$c_rc"
  done
done
echo
if [ "$ALL_MET" = 1 ]; then echo "targets: met on every image"; else echo "targets: MISSED on at least one image"; fi
