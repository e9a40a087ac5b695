# SPDX-License-Identifier: GPL-2.0-only
# Shared by the chunk allocation tests 100-102 (source after common/lib.sh).
# Provides: $CT (tests/tools/chunk_torture), $CC (chunk_check.py: progs'
# view of chunks, dev extents, block group items, free space info and
# bytes_used; cc_on for multi-device filesystems), $MOUNT (1 when mount -o
# loop works), new_starts LOG,
# check_clean WHAT IMG..., kernel_rw WHAT IMG..., super_field IMG FIELD,
# oracle_compare (fsctl inspect block-groups against progs). Loop devices
# and mounts made here are undone at exit.
CT=${FSCTL_CHUNK_TORTURE:-$(dirname "$FSCTL")/tests/chunk_torture}
[ -x "$CT" ] || skip "chunk_torture not built ($CT)"
CC="python3 $FSCTL_SRC/tests/image/common/chunk_check.py"
source "$FSCTL_SRC/tests/image/common/oracle.sh"

CK_LOOPS=()
CK_MNTS=()
ck_cleanup() { release_all "${CK_MNTS[@]}" -- "${CK_LOOPS[@]}"; }
trap ck_cleanup EXIT

MOUNT=1
if ! ( need_mount ) > /dev/null 2>&1; then
  MOUNT=0
  echo "NOTE: mount -o loop is not available here (or not root): the kernel mount parts are skipped"
fi

# Logical starts of the block groups a chunk_torture run reported as new.
new_starts() { sed -n 's/^new \([0-9]*\) .*/\1/p' "$1"; }
super_field() { btrfs inspect-internal dump-super "$1" | awk -v f="$2" '$1 == f {print $2}'; }

# Loop devices for a multi-device filesystem, so that progs and the kernel
# find every device (sets LOOPS).
attach_all() {
  LOOPS=()
  local i l
  for i in "$@"; do
    l=$(losetup -f --show "$i")
    CK_LOOPS+=("$l")
    LOOPS+=("$l")
  done
}
detach_all() {
  local l
  for l in "${LOOPS[@]}"; do loop_release "$l"; done
  LOOPS=()
}

# cc_on "IMG..." CMD ARGS...: chunk_check.py CMD on the filesystem of those
# images; several images are attached as loop devices for the call, so that
# progs finds every device (a striped chunk tree needs all of them).
cc_on() {
  local imgs
  read -r -a imgs <<< "$1"
  local cmd=$2 rc=0
  shift 2
  if [ ${#imgs[@]} -gt 1 ]; then
    attach_all "${imgs[@]}"
    if [ "$cmd" = bytes-used ]; then $CC "$cmd" "${LOOPS[@]}" || rc=$?; else $CC "$cmd" "${LOOPS[0]}" "$@" || rc=$?; fi
    detach_all
  else
    $CC "$cmd" "${imgs[0]}" "$@" || rc=$?
  fi
  return $rc
}

# check_clean WHAT IMG...: btrfs check --readonly passes and sees every device.
check_clean() {
  local what=$1; shift
  local target=$1 rc=0
  if [ $# -gt 1 ]; then
    [ "$(id -u)" -eq 0 ] || skip "a multi-device btrfs check needs loop devices (root)"
    attach_all "$@"
    target=${LOOPS[0]}
  fi
  btrfs check --readonly "$target" > "$T/check.log" 2>&1 || rc=$?
  [ $# -gt 1 ] && detach_all
  [ $rc -eq 0 ] || { tail -30 "$T/check.log"; fail "$what: btrfs check --readonly fails"; }
  if grep -qi "missing" "$T/check.log"; then cat "$T/check.log"; fail "$what: btrfs check did not find every device"; fi
}

# kernel_rw WHAT IMG...: the kernel mounts it read-write, writes a 5 MiB file
# and 300 small ones, unmounts; btrfs check passes afterwards. Skipped
# (saying so) without mount -o loop.
kernel_rw() {
  local what=$1; shift
  [ "$MOUNT" = 1 ] || { echo "$what: kernel mount skipped (mount -o loop unavailable)"; return 0; }
  local mnt="$T/mnt" i
  mkdir -p "$mnt"
  attach_all "$@"
  local opts="" l
  for l in "${LOOPS[@]:1}"; do opts="${opts:+$opts,}device=$l"; done
  [ -n "$opts" ] && opts="-o $opts"
  # shellcheck disable=SC2086
  mount $opts "${LOOPS[0]}" "$mnt" || { detach_all; fail "$what: the kernel does not mount it"; }
  CK_MNTS+=("$mnt")
  head -c 5M /dev/urandom > "$mnt/big.$$"
  mkdir -p "$mnt/small.$$"
  for i in $(seq 1 300); do echo "$what $i" > "$mnt/small.$$/f$i"; done
  sync
  [ "$(stat -c %s "$mnt/big.$$")" = 5242880 ] || fail "$what: written file has the wrong size"
  umount "$mnt"
  detach_all
  check_clean "$what, after the kernel wrote to it" "$@"
  echo "$what: the kernel mounted it read-write and wrote files; btrfs check clean afterwards"
}
