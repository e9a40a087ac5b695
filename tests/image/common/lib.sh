# SPDX-License-Identifier: GPL-2.0-only
# Shared helpers for image tests. Source it from tests/image/NNN-*/test.sh.
# Provides: $FSCTL (binary), $T (scratch dir, emptied), need_root, need_mount,
# skip MSG (exit 77), fail MSG, grep_q (pipe-safe grep -q), loop_release DEV, mounts_under DIR, release_all, img_sum FILE... (sha256 of data regions and layout), mkimg FILE SIZE [mkfs args...], many_files DIR N BIG, unpack_fixture NAME DEST, crash_every_write IMG AFTER ARGS... (a crash at every write, then the rerun), $CHECK_RETRY BTRFS check ARGS... (btrfs check retried past the mount status race; plain `btrfs` gets it through PATH).
set -euo pipefail
: "${FSCTL:?FSCTL must point at the fsctl binary}"
: "${FSCTL_SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}"
# FSCTL_VALIDATE_JSON=1: every `fsctl --format json` of the test has its
# document validated against docs/json/ (tests/tools/fsctl_validating.sh).
if [ "${FSCTL_VALIDATE_JSON:-0}" = 1 ] && [ -z "${FSCTL_REAL:-}" ]; then
  export FSCTL_REAL=$FSCTL
  FSCTL=$FSCTL_SRC/tests/tools/fsctl_validating.sh
  export FSCTL
fi
T=${FSCTL_TEST_TMP:-$(mktemp -d)}
T_REAL=$(realpath -m "$T")
# loop_release DEV: forgets (btrfs device scan --forget) and detaches loop
# device DEV only while it still backs a file of this test (under $T). Tests
# run in parallel: a loop number this test freed may belong to another test
# by the time a cleanup runs, and detaching it pulled the device from under
# that test's mount (CI: 100-chunk-alloc "can't read superblock on
# /dev/loop0" while 101 cleaned up).
loop_release() {
  local f
  f=$(losetup -n -O BACK-FILE "$1" 2>/dev/null) || return 0
  case "$f" in
    "$T_REAL"/* | "$T"/*) ;;
    *) return 0 ;;
  esac
  btrfs device scan --forget "$1" > /dev/null 2>&1 || true
  losetup -d "$1" 2> /dev/null || true
}
# mounts_under DIR: the mount points under DIR, deepest first (findmnt -l:
# -r would print a space in a path as \x20).
mounts_under() {
  findmnt -n -l -o TARGET 2> /dev/null | awk -v d="$(realpath -m "$1")/" 'index($0, d) == 1' | sort -r
}
# stale_mounts_release: a run that failed before its cleanup can leave a
# mount (read-only: rm cannot empty it) or a loop device under its scratch
# directory; the next run of the test unmounts them and loop_releases the
# devices before emptying $T (a failed 015 left a read-only mount at
# tmp/015-inspect-usage/mnt and every rerun failed in rm).
stale_mounts_release() {
  local m l
  mounts_under "$T" | while read -r m; do umount "$m" 2> /dev/null || umount -l "$m" 2> /dev/null || true; done
  losetup -n -l -O NAME 2> /dev/null | while read -r l; do loop_release "$l"; done
  return 0
}
[ ! -d "$T" ] || [ "$(id -u)" -ne 0 ] || stale_mounts_release
rm -rf "$T"; mkdir -p "$T"
SHARED=${FSCTL_SHARED:-$FSCTL_SRC/../shared}
# `btrfs check` retried while its only failure is the mount status race with
# another test's loop device (tests/tools/check_retry.sh): through PATH for
# `btrfs`, through $CHECK_RETRY for a btrfs-progs named by path.
PATH=$FSCTL_SRC/tests/tools/progs-shim:$PATH
CHECK_RETRY=$FSCTL_SRC/tests/tools/check_retry.sh
export PATH CHECK_RETRY_LOG="$T/.check-retries"

skip() { echo "SKIP: $*"; exit 77; }
# grep_q ARGS...: `grep -q ARGS` that reads its input to the end. Under pipefail,
# `producer | grep -q PAT` fails when grep exits at the first match while the
# producer is still writing (it dies of SIGPIPE, status 141): a match read as
# "no match". CI saw it once with `dump-tree | grep -q` (test 100).
grep_q() { local rc=0; grep -q "$@" || rc=$?; cat > /dev/null; return "$rc"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# release_all "${MOUNTS[@]}" -- "${LOOPS[@]}": an EXIT cleanup: unmounts each
# directory that is still a mount point, then loop_release for each device.
release_all() {
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    mountpoint -q "$1" 2> /dev/null && { umount "$1" 2> /dev/null || true; }
    shift
  done
  [ $# -gt 0 ] && shift
  local l
  for l in "$@"; do loop_release "$l"; done
  return 0
}
need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root"; }
# Kernel mount of a loop image: skip (saying so) where it is not available.
need_mount() {
  need_root
  local img="$T/.probe.img" mnt="$T/.probe.mnt"
  truncate -s 128M "$img"; mkfs.btrfs -q -f "$img" >/dev/null
  mkdir -p "$mnt"
  if ! mount -o loop "$img" "$mnt" 2>/dev/null; then rm -f "$img"; skip "mount -o loop not available here"; fi
  umount "$mnt"; rm -f "$img"
}
# img_sum FILE...: one line per FILE, a sha256 over its size and the offset
# and bytes of every 4 KiB block that is not all zeros, read from its data
# regions (SEEK_DATA/SEEK_HOLE); for a block device, over all of it. Where a
# test asserts "the image is byte-identical", compare img_sum before and
# after: it equals sha256sum's verdict but reads only the data regions of a
# sparse image (sha256sum read the whole 1 GiB of zeros again and again: 2-10
# s a call under load). Zeros count the same whether stored, unwritten or a
# hole: the layout itself is not stable. SEEK_DATA reports an unwritten
# extent as data while clean pages of it are cached and as a hole once they
# are evicted, so mkfs.ext4's image "changed" under CI load with nothing
# written to it (026, 2026-12-07).
img_sum() {
  python3 - "$@" <<'PY'
import errno, hashlib, os, stat, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    size = os.lseek(fd, 0, os.SEEK_END)
    whole = stat.S_ISBLK(os.fstat(fd).st_mode)  # no SEEK_DATA on a block device
    h = hashlib.sha256(b"img_sum v2 %d\n" % size)
    BLOCK = 4096
    zero_block = bytes(BLOCK)
    zero_buf = bytes(4 << 20)
    off = done = 0
    while off < size:
        try:
            d = off if whole else os.lseek(fd, off, os.SEEK_DATA)
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
            break  # only a hole left
        e = size if whole else min(os.lseek(fd, d, os.SEEK_HOLE), size)
        # Whole blocks from a block-aligned start, so that a block is hashed
        # the same whichever region boundary it was read from.
        pos = max(d - d % BLOCK, done)
        e = min(size, -(-e // BLOCK) * BLOCK)
        while pos < e:
            buf = os.pread(fd, min(4 << 20, e - pos), pos)
            if not buf:
                raise SystemExit("img_sum: %s: short read at %d" % (path, pos))
            if buf != zero_buf[:len(buf)]:
                view = memoryview(buf)
                for i in range(0, len(buf), BLOCK):
                    blk = view[i:i + BLOCK]
                    if blk != zero_block[:len(blk)]:
                        h.update(b"block %d\n" % (pos + i))
                        h.update(blk)
            pos += len(buf)
        done = max(done, pos)
        off = e
    os.close(fd)
    print(h.hexdigest())
PY
}
# python3 through a version manager's shim (pyenv: a shell script that looks
# up the version) took ~0.7 s a call here, and the tests call it hundreds of
# times: call the interpreter the shim resolves to.
if PYTHON3=$(python3 -c 'import sys; print(sys.executable)' 2> /dev/null) && [ -x "$PYTHON3" ] &&
   [ "$(command -v python3)" != "$PYTHON3" ]; then
  python3() { "$PYTHON3" "$@"; }
fi
mkimg() { local f=$1 size=$2; shift 2; rm -f "$f"; truncate -s "$size" "$f"; mkfs.btrfs -q -f "$@" "$f" >/dev/null; }
# Unpacks ../shared/fixtures*/NAME.img.zst (or .devN) into DEST; returns 1 when absent.
unpack_fixture() {
  local src=$1 dest=$2
  [ -f "$src" ] || return 1
  zstd -q -d --sparse -f "$src" -o "$dest"
}
# mksnapimg IMG NFILES [SNAPFILES] [quota|noquota]: a 1 GiB image (nodesize
# 4K) made through a loop mount (the caller has checked need_mount):
# subvolume sv with NFILES small random files, its snapshot snap with
# SNAPFILES more files, quota enabled and rescanned unless noquota.
mksnapimg() {
  local img=$1 n=$2 extra=${3:-0} quota=${4:-quota} m="$T/.mksnapimg.mnt" i
  mkimg "$img" 1G -n 4096
  mkdir -p "$m"
  mount -o loop "$img" "$m"
  if [ "$quota" = quota ]; then btrfs quota enable "$m"; fi
  btrfs subvolume create "$m/sv" > /dev/null
  for i in $(seq 1 "$n"); do head -c $((i * 37 % 3000 + 1)) /dev/urandom > "$m/sv/f$i"; done
  btrfs subvolume snapshot "$m/sv" "$m/snap" > /dev/null
  for i in $(seq 1 "$extra"); do echo x > "$m/snap/g$i"; done
  if [ "$quota" = quota ]; then btrfs quota rescan -w "$m" > /dev/null; fi
  umount "$m"
}
# many_files DIR N BIG: N files f0..f(N-1) of random bytes in DIR, every
# fourth BIG bytes (a regular extent), the others 200 (inline).
many_files() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, sys
d, n, big = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    with open(f"{d}/f{i}", "wb") as f:
        f.write(os.urandom(big if i % 4 == 0 else 200))
PY
}
# crash_every_write IMG AFTER ARGS...: runs `$FSCTL ARGS... COPY` on a fresh
# copy of IMG (COPY = $T/crash.img) stopped after write 1, 2, ...
# (FSCTL_FAIL_AFTER_WRITES=N, exit 86) until a run completes (exit 0). After
# each crash: btrfs check --readonly clean, the same command completes on
# the crashed copy, btrfs check clean again, then `AFTER COPY N` (a function
# of the test; `:` for none). Fails past 200 points or when the fail point
# never fired; sets CRASH_POINTS.
crash_every_write() {
  local img=$1 after=$2 c="$T/crash.img" n=1 rc; shift 2
  while :; do
    cp --sparse=always "$img" "$c"
    rc=0
    FSCTL_FAIL_AFTER_WRITES=$n "$FSCTL" "$@" "$c" > "$T/crash.out" 2>&1 || rc=$?
    [ $rc -eq 0 ] && break
    [ $rc -eq 86 ] || { cat "$T/crash.out"; fail "$* N=$n: exit $rc, expect 86 (fail point) or 0"; }
    btrfs check --readonly "$c" > "$T/crash.check" 2>&1 || { cat "$T/crash.check"; fail "$* N=$n: btrfs check after the crash"; }
    "$FSCTL" "$@" "$c" > "$T/crash.rerun" 2>&1 || { cat "$T/crash.rerun"; fail "$* N=$n: rerun"; }
    btrfs check --readonly "$c" > "$T/crash.check" 2>&1 || { cat "$T/crash.check"; fail "$* N=$n: btrfs check after the rerun"; }
    "$after" "$c" "$n"
    n=$((n + 1))
    [ $n -lt 200 ] || fail "$*: the run never completed"
  done
  [ $n -gt 2 ] || fail "$*: only $((n - 1)) crash points: the fail point did not work"
  CRASH_POINTS=$((n - 1))
  echo "$*: crash points: $CRASH_POINTS"
}
