#!/usr/bin/env bash
# 064-convert-refusals: what `fsctl convert` refuses, and --dry-run. Each case
# checks the exit code of cmd/output.h, the message, and that the image is
# byte-identical afterwards (lib.sh img_sum: data regions and layout):
#  - mounted (ro loop mount: identity checked; rw mount: exit code): exit 5;
#  - already in the asked state (--no-bg-tree on a fresh image, --bg-tree
#    on a converted one): exit 0, "nothing to do";
#  - missing prerequisite: mkfs.btrfs -R ^free-space-tree, and the
#    spacecache-v1 fixture: exit 4, the message names the free space tree;
#  - a log tree needing replay, made for real: files fsynced under a mount
#    with commit=300 and the image copied before the next commit (as 014);
#    exit 4, the message names the log tree;
#  - an unknown incompat bit (1<<30 set in every superblock copy, crc32c
#    recomputed): exit 4;
#  - (a half conversion in the other direction is no longer refused: it is
#    taken back, test 068-convert-revert);
#  - ENOSPC is NOT covered here: filling a 160 MiB -m single image through
#    the kernel (inline files with 3 KB xattrs until ENOSPC, then data) still
#    left more free metadata than the conversion reserves (the kernel keeps
#    its global reserve free), and took minutes; a real nearly-full image needs
#    another way (e.g. a test-only fill of metadata block groups) — open;
#  - --dry-run on a fresh image and on a half-converted one: exit 0, says how
#    many block groups would move, writes nothing.
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/060-convert-fresh/cvlib.sh"
need_root
MOUNT=1
( need_mount ) > /dev/null 2>&1 || { MOUNT=0; echo "NOTE: mount -o loop unavailable: the mounted, log-tree and ENOSPC cases are skipped"; }

# expect RC PATTERN WHAT IMG ARGS...: run convert, compare exit code, message and img_sum.
expect() {
  local want=$1 pat=$2 what=$3 img=$4; shift 4
  local before rc=0
  before=$(img_sum "$img")
  "$FSCTL" convert "$@" > "$T/out" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat "$T/out"; fail "$what: exit $rc, expect $want"; }
  grep -qiE "$pat" "$T/out" || { cat "$T/out"; fail "$what: message does not match /$pat/"; }
  [ "$(img_sum "$img")" = "$before" ] || fail "$what: the image changed"
  echo "$what: exit $rc, $(grep -v '^WARNING' "$T/out" | head -1 | cut -c1-150); image unchanged"
}

mkimg "$T/a.img" 256M -n 16384

# Mounted.
if [ "$MOUNT" = 1 ]; then
  mkdir -p "$T/mnt"
  mount -o loop,ro "$T/a.img" "$T/mnt"; CV_MNTS+=("$T/mnt")
  expect 5 "mounted" "mounted read-only" "$T/a.img" --bg-tree "$T/a.img"
  umount "$T/mnt"
  mount -o loop "$T/a.img" "$T/mnt"
  rc=0; "$FSCTL" convert --bg-tree "$T/a.img" > "$T/out" 2>&1 || rc=$?
  umount "$T/mnt"
  [ "$rc" = 5 ] || { cat "$T/out"; fail "mounted read-write: exit $rc, expect 5"; }
  echo "mounted read-write: exit 5"
  mkimg "$T/a.img" 256M -n 16384
fi

# --dry-run, then already in the asked state.
expect 0 "would move 3 block group" "--dry-run on a fresh image" "$T/a.img" --bg-tree --dry-run "$T/a.img"
expect 0 "nothing to do" "--no-bg-tree on a fresh image" "$T/a.img" --no-bg-tree "$T/a.img"
cp "$T/a.img" "$T/b.img"
"$FSCTL" -q convert --bg-tree "$T/b.img" > /dev/null
expect 0 "nothing to do" "--bg-tree on a converted image" "$T/b.img" --bg-tree "$T/b.img"
expect 0 "nothing to do" "--bg-tree --dry-run on a converted image" "$T/b.img" --bg-tree --dry-run "$T/b.img"

# Missing prerequisite.
mkimg "$T/nofst.img" 256M -R ^free-space-tree
expect 4 "free space tree" "no free space tree (mkfs -R ^free-space-tree)" "$T/nofst.img" --bg-tree "$T/nofst.img"
expect 4 "free space tree" "no free space tree, --dry-run" "$T/nofst.img" --bg-tree --dry-run "$T/nofst.img"
if unpack_fixture "$SHARED/fixtures/spacecache-v1-16k-crc32c.img.zst" "$T/sc1.img"; then
  expect 4 "free space tree" "spacecache-v1 fixture" "$T/sc1.img" --bg-tree "$T/sc1.img"
  rm -f "$T/sc1.img"
else
  echo "NOTE: spacecache-v1 fixture absent"
fi

# Unknown incompat bit.
cp "$T/a.img" "$T/unk.img"
$CVTOOL super-set "$T/unk.img" incompat_flags $(( $(sb_get "$T/unk.img" incompat_flags) | (1 << 30) )) > /dev/null
expect 4 "incompat" "unknown incompat bit 1<<30" "$T/unk.img" --bg-tree "$T/unk.img"

# Log tree needing replay (a real one).
if [ "$MOUNT" = 1 ]; then
  mkimg "$T/log.img" 256M -n 4096
  mount -o loop,commit=300 "$T/log.img" "$T/mnt"
  mkdir "$T/mnt/logged"; sync
  python3 - "$T/mnt/logged" <<'PY'
import os, sys
for i in range(50):
    fd = os.open(os.path.join(sys.argv[1], "f%d" % i), os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"x" * (100 + 40 * i))
    os.fsync(fd)
    os.close(fd)
PY
  cp --sparse=always "$T/log.img" "$T/crash.img"
  umount "$T/mnt"
  if [ "$(sb_get "$T/crash.img" log_root)" != 0 ]; then
    expect 4 "log tree" "log tree needing replay" "$T/crash.img" --bg-tree "$T/crash.img"
  else
    echo "NOTE: the copy has no log tree (a commit came first); log-tree case not checked"
  fi
  rm -f "$T/log.img" "$T/crash.img"
fi

# A half conversion in the other direction: crash a --bg-tree run after its
# second commit (each batch of 1 is a commit), then ask for --no-bg-tree.
n=1
while :; do
  cp "$T/a.img" "$T/half.img"
  rc=0; FSCTL_FAIL_AFTER_WRITES=$n "$FSCTL" -q convert --bg-tree --batch 1 "$T/half.img" > /dev/null 2>&1 || rc=$?
  [ "$rc" = 86 ] || fail "could not stop a --bg-tree run half-way (exit $rc at write $n)"
  bgjson "$T/bg.h" "$T/half.img"
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["bg_tree_state"]; sys.exit(0 if s["changing_bg_tree"] and s["in_block_group_tree"] > 0 else 1)' "$T/bg.h" && break
  n=$((n + 1)); [ $n -lt 200 ] || fail "no half state found"
done
expect 0 "resuming a half conversion" "--bg-tree --dry-run on the half conversion" "$T/half.img" --bg-tree --dry-run "$T/half.img"
expect 0 "taking back a half conversion" "--no-bg-tree --dry-run on the half conversion" "$T/half.img" --no-bg-tree --dry-run "$T/half.img"

echo ok
