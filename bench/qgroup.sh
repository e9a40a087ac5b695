#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/qgroup.sh: `fsctl qgroup verify IMG` against the reference btrfs-progs'
# `btrfs check --readonly --qgroup-report IMG`, optionally against an older
# fsctl too, on the benchmark images of issue 3, in one run (issues 3, 11, 14).
#
# Tools, alternated run by run (bench/lib.sh order_for: in run 1 old, new,
# reference; in run 2 new, reference, old; ...):
#   new   fsctl qgroup verify (--fsctl)
#   old   a second fsctl (--fsctl-old): the new/old median ratio
#   ref   btrfs check --readonly --qgroup-report of the reference build
#         (--progs DIR: DIR/btrfs); when it is missing the reference is "not
#         measured" (no figure from elsewhere is printed in its place)
# The page cache is dropped before each timed command (sync; echo 3 >
# /proc/sys/vm/drop_caches); every timed command runs under nice -n $NICE
# (default -10; 0 = off). Per run: wall, CPU, run-queue wait, peak RSS
# (/usr/bin/time -v) and exit code. Per image and tool: min/median/max, the
# median ratios new/ref and new/old, a "row:" line for bench/RESULTS.md, and
# the targets of issue 3 on the medians (against the measured reference
# only): fsctl at least 5x faster than btrfs check, at most 1/4 of its peak RSS.
# "agree" (checked once per image, untimed, for each fsctl): the verdicts
# match (fsctl exit 0 <=> check reports no qgroup "are different"), and every
# qgroup check prints has the same computed referenced/exclusive numbers in
# `fsctl --format json qgroup verify`. When check prints no counts at all
# (btrfs-progs 6.2 on a quota tree of several leaves) agree is "n/a" and
# fsctl's exit code says whether it matches the kernel's on-disk numbers.
#
# Needs root (drop_caches; building images uses a loop mount), btrfs-progs,
# GNU time, zstd, tar, python3.
#
# Usage: bench/qgroup.sh [--fsctl PATH] [--fsctl-old PATH] [--progs DIR]
#                        [--btrfs PATH] [--runs N] [--nice N] [--with-64] [IMG...]
#   --fsctl PATH      fsctl binary (default: $FSCTL or build/fsctl); use a Release
#                     build (bench/build-fsctl.sh REV makes one of any commit)
#   --fsctl-old PATH  an older fsctl run side by side (default: none)
#   --progs DIR       reference btrfs-progs build (default /var/tmp/btrfs-progs-ref)
#   --btrfs PATH      btrfs for image facts (default: btrfs on PATH)
#   --runs N          runs per tool and image (default 3)
#   --nice N          niceness of the timed commands (default $NICE or -10; 0 = off)
#   --with-64         the 64-snapshot image too (built on first use, a few minutes)
#   IMG...            measure these images instead of the default set
# Default images (cached under $FSCTL_BENCH_DIR, default /var/tmp/fsctl-bench,
# made on first use, never inside the repository):
#   bg-8T-16k         restored from ../shared/bench-images/bg-8T-16k.tar.zst into
#                     $FSCTL_BENCH_DIR/bg-8T-16k/ (shared with bench/convert.sh)
#   balance-16snap-4k make-balance-16snap-4k.sh OUT.img      (16 snapshots)
#   balance-64snap-4k make-balance-16snap-4k.sh OUT.img 64   (64 snapshots; --with-64)
# A finished $FSCTL_BENCH_DIR/NAME.img (logged in its build.log; shared with
# bench/walk.sh and bench/balance.sh) or $FSCTL_BENCH_DIR/qgroup/NAME.img is
# reused; otherwise the image is built into $FSCTL_BENCH_DIR/NAME.img under a
# lock into a temporary name and renamed when complete (make_snap_image,
# bench/lib.sh).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
CACHE=$BENCH_DIR/qgroup
RUNS=3
WITH64=0
IMGS=()

while [ $# -gt 0 ]; do
  case $1 in
    --fsctl) FSCTL=$2; shift 2 ;;
    --fsctl-old) FSCTL_OLD=$2; shift 2 ;;
    --progs) PROGS=$2; shift 2 ;;
    --btrfs) BTRFS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --nice) NICE=$2; shift 2 ;;
    --with-64) WITH64=1; shift ;;
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
  IMGS+=("$(restore_bg8t "$BENCH_DIR/bg-8T-16k")")
  IMGS+=("$(make_snap_image balance-16snap-4k 16)")
  [ "$WITH64" = 0 ] || IMGS+=("$(make_snap_image balance-64snap-4k 64)")
fi
for img in "${IMGS[@]}"; do [ -s "$img" ] || die "no image $img"; done

label_of() {
  case $1 in
    */huge.img) echo bg-8T-16k ;;
    *) basename "$1" .img ;;
  esac
}

# --- measurement ------------------------------------------------------------
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The reference: btrfs check of the reference build.
REF_BTRFS=$PROGS/btrfs
have_ref=0
if [ -x "$REF_BTRFS" ] && "$REF_BTRFS" check --help 2>&1 | grep -- --qgroup-report > /dev/null; then have_ref=1; fi
ref_version=$([ -x "$REF_BTRFS" ] && "$REF_BTRFS" --version 2>/dev/null | head -1 | awk '{ print $2 }' || true)
REF_LABEL="btrfs check ${ref_version:-?}"
set_tools "$have_ref"

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

if [ "$have_ref" = 1 ]; then
  ref_line="reference: $REF_BTRFS check --readonly --qgroup-report ($("$REF_BTRFS" --version 2>/dev/null | head -1))"
else
  ref_line="reference: not measured (no $REF_BTRFS with check --qgroup-report)"
fi
bench_header "$ref_line" "fsctl: qgroup verify IMG"
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

fmt='%-20s %-9s %3s | %8s %7s %7s %8s %4s\n'
ALL_MET=1
AGREE_ALL=1
for img in "${IMGS[@]}"; do
  label=$(label_of "$img")
  echo "== $label (load average before: $(loadavg))"
  printf "$fmt" image tool run "wall s" "cpu s" "runq s" "RSS MiB" exit
  for run in $(seq 1 "$RUNS"); do
    for tool in $(order_for "$run"); do
      if [ "$tool" = ref ]; then
        timed "$WORK/check.out" nice -n "$NICE" "$REF_BTRFS" check --readonly --qgroup-report "$img"
      else
        timed "$WORK/$tool.out" nice -n "$NICE" "$(fsctl_of "$tool")" qgroup verify "$img"
      fi
      record "qgroup verify" "$tool"
      printf "$fmt" "$label" "${TOOL_NAME[$tool]#fsctl }" "$run" "$T_WALL" "$T_CPU" "$T_RUNQ" "$T_RSS" "$T_RC"
    done
  done
  # The reference's own exit code counts as a run: btrfs check exits 1 for
  # errors outside the qgroups too (bg-8T-16k: stale free space tree entries
  # of Debian's mkfs 6.2, see ../shared/bench-images/README.md).
  if [ "$have_ref" = 1 ]; then
    for tool in "${TOOLS[@]}"; do
      [ "$tool" != ref ] || continue
      "$(fsctl_of "$tool")" --format json qgroup verify "$img" > "$WORK/$tool.json" 2>/dev/null && frc=0 || frc=$?
      agree=$(compare "$WORK/$tool.json" "$WORK/check.out" "$frc")
      case $agree in yes*|n/a*) ;; *) AGREE_ALL=0 ;; esac
      echo "   agree (${TOOL_NAME[$tool]}, exit $frc, with the last check run): $agree"
    done
    if grep -q -i -E 'error|no corresponding|mismatch' "$WORK/check.out"; then
      echo "   btrfs check also said (its lines with error/mismatch, from the last run):"
      grep -i -E 'error|no corresponding|mismatch' "$WORK/check.out" | head -6 | sed 's/^/     | /'
    fi
  else
    echo "   agree: not judged (reference not measured)"
  fi
  echo "   load average after: $(loadavg)"
  summarize "qgroup verify" "$label" "$REF_LABEL"
  # Targets of issue 3, on the medians, against the measured reference only.
  if [ "$have_ref" = 1 ]; then
    # shellcheck disable=SC2086
    read -r speed rssr t_speed t_rss < <(awk -v fw="$(median ${R_WALL["qgroup verify|new"]:-})" -v cw="$(median ${R_WALL["qgroup verify|ref"]:-})" \
      -v fr="$(stats ${R_RSS["qgroup verify|new"]:-} | cut -d' ' -f3)" -v cr="$(stats ${R_RSS["qgroup verify|ref"]:-} | cut -d' ' -f1)" 'BEGIN {
      if (fw !~ /^[0-9.]+$/ || cw !~ /^[0-9.]+$/ || fr !~ /^[0-9.]+$/ || cr !~ /^[0-9.]+$/ || fw == 0 || cr == 0) { print "n/a n/a MISSED MISSED"; exit }
      s = cw / fw; r = fr / cr;
      printf "%.1fx %.3f %s %s\n", s, r, (s >= 5 ? "met" : "MISSED"), (r <= 0.25 ? "met" : "MISSED") }')
    echo "  targets (issue 3): check/fsctl new medians $speed (>= 5x: $t_speed); fsctl new max RSS / check min RSS $rssr (<= 0.25: $t_rss)"
    [ "$t_speed" = met ] && [ "$t_rss" = met ] || ALL_MET=0
  else
    echo "  targets (issue 3): not judged (reference not measured)"
  fi
  echo
  reset_records  # the next image's figures start afresh
done
if [ "$AGREE_ALL" = 1 ]; then echo "agree: yes (or n/a) on every image"; else echo "agree: NO on at least one image"; fi
if [ "$ALL_MET" = 1 ]; then echo "targets: met (or not judged) on every image"; else echo "targets: MISSED on at least one image"; fi
bench_footer
