# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/lib.sh: shared by bench/convert.sh, bench/qgroup.sh and bench/balance.sh.
# Source it first; it sets the defaults below, the script parses its options
# (which may change FSCTL, BTRFS, CACHE ...), then calls bench_preflight.
#
#   ROOT IMAGES_SRC BENCH_DIR FSCTL BTRFS   defaults (FSCTL: $FSCTL or build/fsctl)
#   die MSG                  "<script>: MSG" on stderr, exit 2
#   bench_preflight          root, fsctl, btrfs, GNU time, python3; FSCTL made
#                            absolute; warns when it is not a Release build
#   bench_header [TEXT]      "# bench/NAME DATE", machine, load, fsctl (+TEXT) and btrfs versions
#   build_once FINAL CMD...  runs CMD with $PARTIAL as its output under a lock, then
#                            renames it to FINAL; a second caller waits and reuses FINAL
#   restore_bg8t DIR         DIR/huge.img from ../shared/bench-images/bg-8T-16k.tar.zst
#   make_snap_image NAME SNAPS   the balance-16snap-4k recipe (SNAPS snapshots); prints the path
#   drop_caches, now_ns, gen_of IMG (superblock generation), fresh_copy SRC DST
#   timed OUT CMD...         (needs $WORK) caches dropped, CMD run with stdout+stderr to
#                            OUT; sets T_WALL T_CPU T_RUNQ (s) T_RSS (MiB) T_RC
BENCH_NAME=$(basename "$0")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${FSCTL_SHARED:-$(cd "$ROOT/.." && pwd)/shared}
IMAGES_SRC=$SHARED/bench-images
BENCH_DIR=${FSCTL_BENCH_DIR:-/var/tmp/fsctl-bench}
FSCTL=${FSCTL:-$ROOT/build/fsctl}
BTRFS=$(command -v btrfs || true)

die() { echo "$BENCH_NAME: $*" >&2; exit 2; }

bench_preflight() {
  [ "$(id -u)" = 0 ] || die "needs root (drop_caches, loop devices, mount)"
  [ -x "$FSCTL" ] || die "no fsctl at $FSCTL (build a Release copy, pass --fsctl)"
  [ -n "$BTRFS" ] && [ -x "$BTRFS" ] || die "btrfs not found"
  [ -x /usr/bin/time ] || die "GNU time missing (apt-get install time)"
  command -v python3 >/dev/null || die "python3 missing"
  FSCTL=$(readlink -f "$FSCTL")
  local cache_file
  cache_file=$(dirname "$FSCTL")/CMakeCache.txt
  if [ -f "$cache_file" ] && ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release' "$cache_file"; then
    echo "warning: $FSCTL is not a Release build" >&2
  fi
}

bench_header() {  # [TEXT after the fsctl line]
  echo "# bench/$BENCH_NAME $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# fsctl: $FSCTL ($("$FSCTL" --version 2>/dev/null | head -1))${1:-}"
  echo "# btrfs: $BTRFS ($("$BTRFS" --version 2>/dev/null | head -1))"
}

build_once() {
  local final=$1; shift
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
  if [ "$final" = "$shared" ] && ! grep -qs "built $shared" "$BENCH_DIR/build.log"; then
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

timed() {
  local out=$1; shift
  [ -f "$WORK/runq.py" ] || _bench_runq_py
  drop_caches
  set +e
  RUNQ_OUT=$WORK/runq /usr/bin/time -v -o "$WORK/time" python3 "$WORK/runq.py" "$@" > "$out" 2>&1
  T_RC=$?
  set -e
  read -r T_WALL T_CPU T_RUNQ < "$WORK/runq"
  T_RSS=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$WORK/time")
}
