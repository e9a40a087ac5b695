#!/usr/bin/env bash
# 061-convert-fixtures: `fsctl convert --bg-tree` then `--no-bg-tree` on every
# image of ../shared/fixtures that has the prerequisites (a valid free space
# tree; spacecache-v1-16k-crc32c has not and is a refusal case in 063):
# basic (4K dup, reflinks, hardlinks, compression), manybg (106 block groups),
# mixed-bg, the three quota images, raid1 on 2 devices, sha256 csums, and the
# qgroup-corrupt image. Proves, after each direction: btrfs check --readonly
# passes (for the corrupt image: says exactly what it said before, the one
# edited qgroup), inspect block-groups lists the same block groups with every
# item in the asked tree, qgroup verify gives the same verdict as before (0 on
# the quota images), and (where mount works) the kernel mounts it rw, every
# file has the sha256 of the fixture JSON, new files can be written, and
# btrfs check still passes after the unmount.
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/060-convert-fresh/cvlib.sh"
need_root
FX=$SHARED/fixtures
[ -f "$FX/MANIFEST.json" ] || skip "no fixtures at $FX (they live beside the repo in ../shared)"
MOUNT=1
need_mount_probe() { (need_mount) > /dev/null 2>&1; }
need_mount_probe || { MOUNT=0; echo "NOTE: mount -o loop unavailable: kernel mount parts skipped"; }

# btrfs check: clean, or (corrupt image) the same complaints as before.
check_like_before() {
  local what=$1
  if [ -z "$checkref" ]; then check_clean "$what" "${checkdev[@]}"; return; fi
  btrfs check --readonly "${checkdev[0]}" > "$T/check.out" 2>&1 && fail "$what: btrfs check passes on an image it failed before"
  diff <(grep -E "ERROR|are different" "$checkref") <(grep -E "ERROR|are different" "$T/check.out") > /dev/null ||
    { diff "$checkref" "$T/check.out" | head -20; fail "$what: btrfs check says something else than before"; }
}
# qgroup verify: every qgroup's status, and its computed and on-disk
# numbers while no kernel has written to the image (JSON).
qv() {
  local rc=0
  "$FSCTL" qgroup verify --format json "${devs[@]}" > "$T/qv.json" || rc=$?
  python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["qgroups"]:
    print(r["qgroupid"], r["status"], *([r["computed"], r.get("ondisk")] if sys.argv[2] == "1" else []))' "$T/qv.json" "$nums"
  return $rc
}
qgroups_like_before() {
  [ "$quota" = 1 ] || return 0
  local rc=0
  qv > "$T/qv.out" || rc=$?
  [ "$rc" = "$qrc" ] || fail "$1: qgroup verify exit $rc, before $qrc"
  diff "$T/qv.ref" "$T/qv.out" > /dev/null || { diff "$T/qv.ref" "$T/qv.out" | head; fail "$1: qgroup verify output changed"; }
}
mount_verify() {  # TAG
  [ "$MOUNT" = 1 ] || return 0
  mount_fs "$T/mnt" "${mountdev[@]}" || fail "$name: the kernel does not mount it after $1"
  $CVTOOL files-json "$FX/$name.json" "$T/mnt" > "$T/files.out" || { cat "$T/files.out"; fail "$name: files differ after $1"; }
  write_more "$T/mnt" "$1"
  umount "$T/mnt"
  check_like_before "$name after $1 and a kernel rw mount"
}

ran=0
for name in basic-4k-crc32c-dup manybg-4k-single-1g mixed-bg-4k-crc32c quota-16k-xxhash-dup quota-4k-crc32c-single \
            quota-64k-blake2-dup raid1-2dev-16k-xxhash sha256-4k-single-zstdforce quota-4k-crc32c-single-corrupt; do
  [ -f "$FX/$name.json" ] || { echo "NOTE: $name absent"; continue; }
  t0=$SECONDS
  fixture_devs "$FX" "$name"
  quota=$(python3 -c 'import json,sys; print(1 if (json.load(open(sys.argv[1])).get("quota") or {}).get("enabled") else 0)' "$FX/$name.json")
  checkref=""
  if ! btrfs check --readonly "${checkdev[0]}" > "$T/check.ref" 2>&1; then
    grep -q "are different" "$T/check.ref" || { tail "$T/check.ref"; fail "$name: btrfs check fails on the fixture as shipped"; }
    checkref=$T/check.ref
  fi
  qrc=0
  nums=1
  [ "$quota" = 1 ] && { qv > "$T/qv.ref" || qrc=$?; }
  bgjson "$T/bg.0" "${devs[@]}"

  "$FSCTL" convert --bg-tree --batch 16 --format json "${devs[@]}" > "$T/cv.json" || fail "$name: convert --bg-tree failed"
  check_like_before "$name after --bg-tree"
  bgjson "$T/bg.1" "${devs[@]}"
  $CVTOOL bgs-same "$T/bg.0" "$T/bg.1" BLOCK_GROUP_TREE block-group-tree > /dev/null || fail "$name: block groups after --bg-tree"
  expect_features "${devs[0]}" bgt
  qgroups_like_before "$name after --bg-tree"
  mount_verify bgt
  if [ "$MOUNT" = 1 ] && [ "$quota" = 1 ]; then nums=0; qv > "$T/qv.ref" || true; fi
  bgjson "$T/bg.1k" "${devs[@]}"

  "$FSCTL" convert --no-bg-tree --batch 16 --format json "${devs[@]}" > "$T/cv.json" || fail "$name: convert --no-bg-tree failed"
  check_like_before "$name after --no-bg-tree"
  bgjson "$T/bg.2" "${devs[@]}"
  $CVTOOL bgs-same "$T/bg.1k" "$T/bg.2" EXTENT_TREE extent-tree > /dev/null || fail "$name: block groups after --no-bg-tree"
  expect_features "${devs[0]}" extent
  qgroups_like_before "$name after --no-bg-tree"
  mount_verify extent
  qgroups_like_before "$name at the end"

  nbg=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["block_groups"]))' "$T/bg.0")
  echo "$name: $nbg block groups: both directions ok$([ "$MOUNT" = 1 ] && echo "; mount, sha256 of $(grep -o '^[0-9]*' "$T/files.out") files, writes ok")$([ -n "$checkref" ] && echo "; check reports only the edited qgroup, as before") ($((SECONDS - t0)) s)"
  ran=$((ran + 1))
  cv_cleanup; CV_LOOPS=()
  rm -f "$T/$name"*.img
done
[ "$ran" -gt 0 ] || skip "no fixture image found in $FX"
echo ok
