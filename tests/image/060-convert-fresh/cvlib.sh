# SPDX-License-Identifier: GPL-2.0-only
# Shared by the convert image tests 060-063 (source after common/lib.sh).
# Provides: $CVTOOL; bgjson OUT DEV...; check_clean WHAT DEV...; sb_get DEV FIELD;
# expect_features DEV bgt|extent; mount_fs MNT DEV...; sums DIR; attach IMG (sets
# $LOOPDEV, detached at exit); cv_cleanup (trap EXIT: unmounts and
# detaches only what these helpers made).
CVTOOL="python3 $FSCTL_SRC/tests/image/060-convert-fresh/cvtool.py"
CV_LOOPS=()
CV_MNTS=()
cv_cleanup() { release_all "${CV_MNTS[@]}" -- "${CV_LOOPS[@]}"; }
trap cv_cleanup EXIT

attach() { LOOPDEV=$(losetup -f --show "$1"); CV_LOOPS+=("$LOOPDEV"); }
bgjson() { local out=$1; shift; "$FSCTL" inspect block-groups --format json "$@" > "$out"; }
# btrfs check --readonly must pass (multi-device: give loop devices).
check_clean() {
  local what=$1; shift
  if ! btrfs check --readonly "$1" > "$T/check.out" 2>&1; then
    tail -30 "$T/check.out"
    fail "$what: btrfs check --readonly fails"
  fi
}
# build_base IMG CMD...: runs CMD, which makes IMG through the kernel, until
# btrfs check --readonly passes on IMG, at most 3 times (then the test
# fails). Kernel 6.18 once left (063 in a CI run, 2026-12-07) a 1 GiB data
# group whose item said used 0 under its fallocated extents ("block group
# [...] used 0 but extent items used 1073741824"), before fsctl had touched
# the image: an input the test cannot use, not a result of fsctl. Four builds
# of the same image in a row were clean after it. Each rebuild says so.
build_base() {
  local img=$1 attempt; shift
  for attempt in 1 2 3; do
    "$@"
    btrfs check --readonly "$img" > "$T/check.base" 2>&1 && return 0
    echo "NOTE: the base image as the kernel made it fails btrfs check --readonly (not fsctl's doing: fsctl has not run); check said:"
    grep -E "ERROR|used|mismatch|error" "$T/check.base" | head -5
  done
  fail "the kernel made an inconsistent base image 3 times in a row"
}
sb_get() { $CVTOOL super-get "$1" "$2"; }
# Superblock bits after a finished conversion: compat_ro BLOCK_GROUP_TREE
# (0x8) set or clear, CHANGING_BG_TREE (1<<38) clear; with the bg tree, also
# NO_HOLES (incompat 0x200) and FREE_SPACE_TREE_VALID (0x2), which the kernel requires.
expect_features() {
  local dev=$1 want=$2 cro fl inc
  cro=$(sb_get "$dev" compat_ro_flags); fl=$(sb_get "$dev" flags); inc=$(sb_get "$dev" incompat_flags)
  (( (fl >> 38 & 1) == 0 )) || fail "CHANGING_BG_TREE still set"
  if [ "$want" = bgt ]; then
    (( cro & 8 )) || fail "compat_ro BLOCK_GROUP_TREE not set ($cro)"
    (( cro & 2 )) || fail "FREE_SPACE_TREE_VALID not set"
    (( inc & 0x200 )) || fail "NO_HOLES not set ($inc)"
  else
    (( (cro & 8) == 0 )) || fail "compat_ro BLOCK_GROUP_TREE still set ($cro)"
  fi
}
# mount_fs MNT DEV [DEV2]: kernel rw mount (loop for an image file).
mount_fs() {
  local mnt=$1 dev=$2; shift 2
  mkdir -p "$mnt"
  if [ $# -gt 0 ]; then
    mount -o "device=$1" "$dev" "$mnt" || return 1
  elif [ -b "$dev" ]; then
    mount "$dev" "$mnt" || return 1
  else
    mount -o loop "$dev" "$mnt" || return 1
  fi
  CV_MNTS+=("$mnt")
}
# sha256 of every regular file under DIR, sorted by path.
# mk_many_bg IMG MNT: a 12 GiB image (4K nodes, single metadata) with 10
# block groups — 8 data groups of 1 GiB preallocated by 7 files, metadata,
# system — left mounted on MNT for the caller to add to and unmount.
mk_many_bg() {
  mkimg "$1" 12G -n 4096 -m single
  mount_fs "$2" "$1"
  local i
  for i in 1 2 3 4 5 6 7; do fallocate -l 1G "$2/f$i"; done
}
sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum); }
# write_more MNT TAG: new files after a mount of the converted filesystem.
write_more() {
  mkdir -p "$1/new-$2"
  head -c 5M /dev/urandom > "$1/new-$2/big"
  for i in 1 2 3 4 5 6 7 8; do echo "$2 $i" > "$1/new-$2/s$i"; done
  sync
}

# fixture_devs FX NAME: unpacks fixture NAME from directory FX into $T and
# sets devs (the devices to give fsctl), mountdev (what to mount) and
# checkdev (what btrfs check reads); a 2-device fixture is attached to loop
# devices and scanned.
fixture_devs() {
  local fx=$1 name=$2 d
  devs=() checkdev=() mountdev=()
  if [ -f "$fx/$name.img.zst" ]; then
    unpack_fixture "$fx/$name.img.zst" "$T/$name.img"
    devs=("$T/$name.img"); checkdev=("${devs[0]}"); mountdev=("${devs[0]}")
  else
    for d in 1 2; do
      unpack_fixture "$fx/$name.dev$d.img.zst" "$T/$name.dev$d.img"
      attach "$T/$name.dev$d.img"; devs+=("$LOOPDEV")
    done
    btrfs device scan "${devs[@]}" > /dev/null
    checkdev=("${devs[0]}"); mountdev=("${devs[0]}" "${devs[1]}")
  fi
}
