# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/lib.sh: shared by bench/convert.sh, bench/qgroup.sh and bench/balance.sh.
# Source it first; it sets the defaults below, the script parses its options
# (which may change FSCTL, FSCTL_OLD, PROGS, BTRFS, NICE, CACHE ...), then calls
# bench_preflight.
#
#   ROOT IMAGES_SRC BENCH_DIR FSCTL BTRFS   defaults (FSCTL: $FSCTL or build/fsctl)
#   FSCTL_OLD   a second fsctl ("old", e.g. the commit before a refactoring;
#               --fsctl-old), empty = none
#   PROGS       directory of the reference btrfs-progs build (btrfs, btrfstune;
#               --progs, default /var/tmp/btrfs-progs-ref, made by
#               ../shared/tools/build-btrfs-progs.sh); never a printed figure:
#               a tool missing there is "not measured"
#   NICE        niceness of every timed command, the same for all tools
#               (--nice, default $NICE or -10; 0 = off)
#   die MSG                  "<script>: MSG" on stderr, exit 2
#   bench_preflight          root, fsctl (and the old one), btrfs, GNU time,
#                            python3; FSCTL/FSCTL_OLD made absolute; warns when
#                            one is not a Release build
#   fsctl_describe BIN       "BIN (version; Release build of COMMIT)"
#   bench_header [LINES]     "# bench/NAME DATE", machine (CPU model, nproc),
#                            load before, both fsctl, btrfs, then LINES
#   bench_footer             load after, load range at the timed commands, duration
#   build_once FINAL CMD...  runs CMD with $PARTIAL as its output under a lock, then
#                            renames it to FINAL; a second caller waits and reuses FINAL
#   restore_bg8t DIR         DIR/huge.img from ../shared/bench-images/bg-8T-16k.tar.zst
#   make_snap_image NAME SNAPS   the balance-16snap-4k recipe (SNAPS snapshots); prints the path
#   drop_caches, now_ns, gen_of IMG (superblock generation), fresh_copy SRC DST
#   timed OUT CMD...         (needs $WORK) caches dropped, CMD run with stdout+stderr to
#                            OUT; sets T_WALL T_CPU T_RUNQ (s) T_RSS (MiB) T_RC
#   Side by side (tools "ref", "old", "new" of set_tools):
#   set_tools REF_OK         TOOLS: old (with FSCTL_OLD), new, ref (when REF_OK=1)
#   order_for RUN            TOOLS rotated by RUN-1: each tool starts a round in turn
#   record JOB TOOL          files the last timed command's figures under JOB/TOOL
#                            (a failed run, T_RC != 0, is counted, not timed)
#   reset_records            forgets every recorded figure (before the next image)
#   summarize JOB IMAGE REF_LABEL   min/median/max per tool, the median ratios
#                            new/ref and new/old, and a "row:" line for RESULTS.md
BENCH_NAME=$(basename "$0")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${FSCTL_SHARED:-$(cd "$ROOT/.." && pwd)/shared}
IMAGES_SRC=$SHARED/bench-images
BENCH_DIR=${FSCTL_BENCH_DIR:-/var/tmp/fsctl-bench}
FSCTL=${FSCTL:-$ROOT/build/fsctl}
BTRFS=$(command -v btrfs || true)
FSCTL_OLD=${FSCTL_OLD:-}
PROGS=${PROGS:-/var/tmp/btrfs-progs-ref}
NICE=${NICE:--10}
BENCH_T0=$SECONDS

die() { echo "$BENCH_NAME: $*" >&2; exit 2; }

bench_preflight() {
  [ "$(id -u)" = 0 ] || die "needs root (drop_caches, loop devices, mount)"
  [ -x "$FSCTL" ] || die "no fsctl at $FSCTL (build a Release copy, pass --fsctl)"
  [ -z "$FSCTL_OLD" ] || [ -x "$FSCTL_OLD" ] || die "no old fsctl at $FSCTL_OLD (--fsctl-old)"
  [ -n "$BTRFS" ] && [ -x "$BTRFS" ] || die "btrfs not found"
  [ -x /usr/bin/time ] || die "GNU time missing (apt-get install time)"
  command -v python3 >/dev/null || die "python3 missing"
  FSCTL=$(readlink -f "$FSCTL")
  [ -z "$FSCTL_OLD" ] || FSCTL_OLD=$(readlink -f "$FSCTL_OLD")
  [ -z "$FSCTL_OLD" ] || [ "$FSCTL_OLD" != "$FSCTL" ] || echo "warning: --fsctl-old is the same file as --fsctl" >&2
  local bin cache_file
  for bin in "$FSCTL" $FSCTL_OLD; do
    cache_file=$(dirname "$bin")/CMakeCache.txt
    if [ -f "$cache_file" ] && ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release' "$cache_file"; then
      echo "warning: $bin is not a Release build" >&2
    fi
  done
}

# fsctl_describe BIN: path, --version, build type and the source commit: the
# SOURCE_COMMIT file bench/build-fsctl.sh leaves in the source directory, else
# the source directory's git HEAD (+dirty when tracked files differ from it).
fsctl_describe() {
  local bin=$1 cache src="" type="" commit=""
  cache=$(dirname "$bin")/CMakeCache.txt
  if [ -f "$cache" ]; then
    src=$(awk -F= '/^CMAKE_HOME_DIRECTORY:/ { print $2; exit }' "$cache")
    type=$(awk -F= '/^CMAKE_BUILD_TYPE:/ { print $2; exit }' "$cache")
  fi
  if [ -n "$src" ] && [ -s "$src/SOURCE_COMMIT" ]; then
    commit=$(head -c 12 "$src/SOURCE_COMMIT")
  elif [ -n "$src" ] && git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    commit=$(git -C "$src" rev-parse --short=12 HEAD)
    [ -z "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit+dirty"
  fi
  echo "$bin ($("$bin" --version 2>/dev/null | head -1); ${type:-unknown} build${commit:+ of $commit}${src:+, source $src})"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# cpu_busy: percentage of all CPUs busy (not idle or iowait) over one second
cpu_busy() {
  local a b
  a=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $5+$6; exit }' /proc/stat)
  sleep 1
  b=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $5+$6; exit }' /proc/stat)
  awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); busy = y[1] - x[1]; idle = y[2] - x[2];
    printf "%.0f%%", (busy + idle > 0) ? 100 * busy / (busy + idle) : 0 }'
}

bench_header() {  # [LINE...] printed after the tool lines
  local line
  echo "# bench/$BENCH_NAME $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), nproc $(nproc), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, kernel $(uname -r)"
  echo "# load average before: $(loadavg) (1/5/15 min); CPUs busy over 1 s: $(cpu_busy); busiest: $(ps -eo pcpu=,comm= --sort=-pcpu | head -3 | awk '{ printf "%s%s %s%%", (NR > 1 ? ", " : ""), $2, $1 }')"
  echo "# fsctl new: $(fsctl_describe "$FSCTL")"
  if [ -n "$FSCTL_OLD" ]; then echo "# fsctl old: $(fsctl_describe "$FSCTL_OLD")"; else echo "# fsctl old: none (no --fsctl-old)"; fi
  echo "# btrfs (image facts, checks): $BTRFS ($("$BTRFS" --version 2>/dev/null | head -1))"
  for line in "$@"; do echo "# $line"; done
  echo "# every timed command: page cache dropped first (sync; echo 3 > /proc/sys/vm/drop_caches), under nice -n $NICE; wall, CPU and run-queue wait (runq.py), peak RSS (/usr/bin/time -v)"
  echo "# tools alternate run by run: ${TOOLS[*]:-?} in turn, the first tool rotating each run"
}

bench_footer() {
  local lo hi
  if [ ${#LOADS[@]} -gt 0 ]; then
    lo=$(printf '%s\n' "${LOADS[@]}" | sort -g | head -1)
    hi=$(printf '%s\n' "${LOADS[@]}" | sort -g | tail -1)
  fi
  echo "# load average after: $(loadavg) (1/5/15 min); 1-min load at the ${#LOADS[@]} timed commands: ${lo:-?}-${hi:-?}; script ran $((SECONDS - BENCH_T0)) s"
}

build_once() {
  local final=$1 a; shift
  # $PARTIAL is expanded only by a shell: a command given it as a literal
  # argument builds a file named '$PARTIAL' in the working directory
  # (bench/memory.sh and scaling.sh did, 2026-12-07).
  if [ "$1" != bash ] && [ "$1" != sh ]; then
    for a in "$@"; do
      case $a in *'$PARTIAL'*)
        echo "$BENCH_NAME: build_once $final: '$1' would get \$PARTIAL unexpanded; run it through bash -c" >&2
        return 2 ;;
      esac
    done
  fi
  [ -s "$final" ] && return 0
  (
    flock 9
    [ -s "$final" ] && exit 0
    PARTIAL=$final.partial
    export PARTIAL
    echo "building $final ..." >&2
    if ! "$@" >&2 || [ ! -s "$PARTIAL" ]; then
      echo "$BENCH_NAME: building $final failed" >&2
      rm -f "$PARTIAL"
      exit 1
    fi
    mv "$PARTIAL" "$final"
  ) 9>"$final.lock"
}

restore_bg8t() {
  local d=$1
  mkdir -p "$d"
  build_once "$d/huge.img" bash -c "
    set -euo pipefail; t=\$(mktemp -d '$d/restore.XXXXXX')
    zstd -dc '$IMAGES_SRC/bg-8T-16k.tar.zst' | tar -xS -f - -C \"\$t\"
    mv \"\$t/huge.img\" \"\$PARTIAL\"; rmdir \"\$t\""
  echo "$d/huge.img"
}

# make_snap_image NAME SNAPS: $BENCH_DIR/NAME.img when a finished build of it
# is logged in $BENCH_DIR/build.log (bench/walk.sh's image), else
# $BENCH_DIR/qgroup/NAME.img when it exists (made by an earlier bench/qgroup.sh),
# else it is built (a few minutes) into $BENCH_DIR/NAME.img, or into
# $BENCH_DIR/qgroup/ when an unlogged file already sits at the first path.
make_snap_image() {
  local name=$1 snaps=$2
  local shared=$BENCH_DIR/$name.img final
  if [ -s "$shared" ] && [ ! -e "$shared.partial" ] && grep -qs "built $shared" "$BENCH_DIR/build.log"; then
    echo "$shared"; return
  fi
  if [ -s "$BENCH_DIR/qgroup/$name.img" ]; then echo "$BENCH_DIR/qgroup/$name.img"; return; fi
  if [ -e "$shared" ]; then final=$BENCH_DIR/qgroup/$name.img; else final=$shared; fi
  mkdir -p "$(dirname "$final")"
  # The recipe's EXIT trap runs under set -e and stops at its failing umount:
  # its exit status is 1 even after "built ...", and its loop device stays
  # attached. Judge success by that line and detach the loop devices on our file.
  build_once "$final" bash -c "
    '$IMAGES_SRC/make-balance-16snap-4k.sh' \"\$PARTIAL\" $snaps | tee \"\$PARTIAL.log\"
    losetup -n -O NAME -j \"\$PARTIAL\" | xargs -r -n1 losetup -d
    grep -q '^built ' \"\$PARTIAL.log\" && rm -f \"\$PARTIAL.log\""
  if [ -s "$final" ] && [ "$final" = "$shared" ] && ! grep -qs "built $shared" "$BENCH_DIR/build.log"; then
    echo "built $shared (by bench/$BENCH_NAME, $(date -u '+%Y-%m-%d %H:%M UTC'))" >> "$BENCH_DIR/build.log"
  fi
  echo "$final"
}

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }
now_ns() { date +%s%N; }
gen_of() { "$BTRFS" inspect-internal dump-super "$1" 2>/dev/null | awk '!s && $1 == "generation" { print $2; s = 1 }'; }
fresh_copy() {  # SRC DST
  rm -f "$2"
  cp --sparse=always "$1" "$2"
}

# runq.py CMD...: runs CMD and writes "wall cpu runq" (seconds) to $RUNQ_OUT:
# wall from fork to exit, user + sys CPU of CMD (and the children it waited
# for), and the time CMD's main thread spent runnable but waiting for a CPU
# (/proc/PID/schedstat, read from the zombie before it is reaped). On a loaded
# machine wall - runq is roughly what the command would take alone.
_bench_runq_py() {
  cat > "$WORK/runq.py" <<'PYEOF'
import os, sys, time
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
t1 = time.monotonic()
try:
    runq = int(open("/proc/%d/schedstat" % pid).read().split()[1]) / 1e9
except Exception:
    runq = float("nan")
_, status, ru = os.wait4(pid, 0)
open(os.environ["RUNQ_OUT"], "w").write("%.3f %.2f %.3f\n" % (t1 - t0, ru.ru_utime + ru.ru_stime, runq))
sys.exit(os.waitstatus_to_exitcode(status) & 0xff)
PYEOF
}

LOADS=()
timed() {
  local out=$1; shift
  [ -f "$WORK/runq.py" ] || _bench_runq_py
  drop_caches
  LOADS+=("$(cut -d' ' -f1 /proc/loadavg)")
  set +e
  RUNQ_OUT=$WORK/runq /usr/bin/time -v -o "$WORK/time" python3 "$WORK/runq.py" "$@" > "$out" 2>&1
  T_RC=$?
  set -e
  read -r T_WALL T_CPU T_RUNQ < "$WORK/runq"
  T_RSS=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$WORK/time")
}

# --- side by side: old fsctl, new fsctl, reference ------------------------------
declare -A TOOL_NAME=([old]="fsctl old" [new]="fsctl new" [ref]="reference")
declare -A R_WALL R_CPU R_ALONE R_RSS R_FAIL
TOOLS=()
set_tools() {  # REF_OK
  TOOLS=()
  [ -z "$FSCTL_OLD" ] || TOOLS+=(old)
  TOOLS+=(new)
  [ "$1" != 1 ] || TOOLS+=(ref)
}
order_for() {  # RUN
  local n=${#TOOLS[@]} i
  for ((i = 0; i < n; i++)); do printf '%s ' "${TOOLS[$(((i + $1 - 1) % n))]}"; done
}
fsctl_of() {  # TOOL: the binary of old or new
  if [ "$1" = old ]; then echo "$FSCTL_OLD"; else echo "$FSCTL"; fi
}
reset_records() { R_WALL=() R_CPU=() R_ALONE=() R_RSS=() R_FAIL=(); }
record() {  # JOB TOOL
  local k="$1|$2"
  if [ "$T_RC" != 0 ]; then R_FAIL[$k]=$(( ${R_FAIL[$k]:-0} + 1 )); return 0; fi
  R_WALL[$k]+="$T_WALL " R_CPU[$k]+="$T_CPU " R_RSS[$k]+="$T_RSS "
  R_ALONE[$k]+="$(awk -v w="$T_WALL" -v q="$T_RUNQ" 'BEGIN { printf "%.3f", w - q }') "
}
# stats V...: "min median max" (median of an even count: mean of the middle two); "- - -" for none
stats() {
  [ $# -gt 0 ] || { echo "- - -"; return; }
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
    m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    printf "%s %.3f %s\n", a[1], m, a[NR] }'
}
median() { stats "$@" | cut -d' ' -f2; }
# ratio A B: A/B with 2 decimals, or n/a when either is not a number
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'
}
# fsctl_commit BIN: the short commit fsctl_describe finds, else the binary's directory
fsctl_commit() {
  local d
  d=$(fsctl_describe "$1")
  case $d in
    *" build of "*) d=${d#* build of }; echo "${d%%[,)]*}" ;;
    *) dirname "$1" ;;
  esac
}

# summarize JOB IMAGE REF_LABEL [REF_RSS_TEXT]: per tool (reference, old,
# new) the runs, min/median/max wall seconds, median CPU seconds and median
# wall minus run-queue wait, the largest peak RSS; the median ratios; then
# "row: | JOB | IMAGE | ref median | old median | new median | new/ref |
# new/old | peak RSS |" for the table at the top of bench/RESULTS.md.
# REF_RSS_TEXT replaces the reference's RSS in the row (the kernel's balance).
summarize() {
  local job=$1 image=$2 ref_label=$3 ref_rss_text=${4:-} t k n runs lo med hi cpu alone rss
  local -A MED RSSX
  local fmt='%-9s %-36s %5s | %7s %7s %7s | %7s %13s | %7s\n'
  echo "summary: $job, $image (wall seconds over the successful runs; F = failed runs, not timed)"
  printf "$fmt" tool "" runs min median max "cpu med" "wall-runq med" "RSS MiB"
  for t in ref old new; do
    k="$job|$t"
    case $t in
      ref) n=$ref_label ;;
      old) [ -n "$FSCTL_OLD" ] || continue; n=$(fsctl_commit "$FSCTL_OLD") ;;
      new) n=$(fsctl_commit "$FSCTL") ;;
    esac
    if [ "$t" = ref ] && [[ " ${TOOLS[*]} " != *" ref "* ]]; then
      printf "$fmt" "${TOOL_NAME[$t]}" "${n:0:36}" - "not measured" "" "" "" "" ""
      MED[$t]="not measured" RSSX[$t]="not measured"
      continue
    fi
    # shellcheck disable=SC2086
    read -r lo med hi < <(stats ${R_WALL[$k]:-})
    # shellcheck disable=SC2086
    cpu=$(median ${R_CPU[$k]:-}) alone=$(median ${R_ALONE[$k]:-})
    # shellcheck disable=SC2086
    rss=$(stats ${R_RSS[$k]:-} | cut -d' ' -f3)
    # shellcheck disable=SC2086
    runs=$(set -- ${R_WALL[$k]:-}; echo $#)
    [ "${R_FAIL[$k]:-0}" = 0 ] || runs="$runs+${R_FAIL[$k]}F"
    printf "$fmt" "${TOOL_NAME[$t]}" "${n:0:36}" "$runs" "$lo" "$med" "$hi" "$cpu" "$alone" "$rss"
    MED[$t]=$med RSSX[$t]=$rss
  done
  [ -z "$ref_rss_text" ] || RSSX[ref]=$ref_rss_text
  local nr no nr_text no_text
  nr=$(ratio "${MED[new]}" "${MED[ref]}")
  no=$(ratio "${MED[new]}" "${MED[old]:-}")
  if [ "$nr" != n/a ]; then nr_text="$nr (the reference takes $(ratio "${MED[ref]}" "${MED[new]}")x as long)"
  elif [ "${MED[ref]}" = "not measured" ]; then nr_text="n/a (reference not measured)"; else nr_text=n/a; fi
  if [ -n "$FSCTL_OLD" ]; then no_text=$no; else no_text="n/a (no --fsctl-old)"; fi
  echo "  median ratios: new/ref $nr_text; new/old $no_text"
  local sfx_ref=" s" sfx_old=" s"
  [ "${MED[ref]}" != "not measured" ] || sfx_ref=""
  [ -n "${MED[old]:-}" ] || sfx_old=""
  echo "row: | $job | $image | ${MED[ref]}$sfx_ref | ${MED[old]:--}$sfx_old | ${MED[new]} s | $nr | $no | new ${RSSX[new]}, old ${RSSX[old]:--}, ref ${RSSX[ref]} |"
}
