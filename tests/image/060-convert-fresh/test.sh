#!/usr/bin/env bash
# 060-convert-fresh: `fsctl convert --bg-tree` then `--no-bg-tree` on fresh
# mkfs.btrfs images populated through a loop mount (files of many sizes, a
# preallocated file, a subvolume, a read-only snapshot of it changed
# afterwards; quota on in two). Images cover nodesize 4K/16K/64K, every csum
# type (crc32c, xxhash, sha256, blake2), metadata single/dup/raid1 (2
# devices), and one made with ^no-holes. Proves, for each direction:
#  - btrfs check --readonly passes;
#  - `inspect block-groups` lists the same block groups (start, length,
#    flags; used of data/system groups) with every item in the asked tree,
#    and the superblock bits (compat_ro BLOCK_GROUP_TREE, CHANGING_BG_TREE
#    clear, NO_HOLES set going to the bg tree as the kernel requires);
#  - the kernel mounts it rw, every file's sha256 is unchanged, new files can
#    be written, and btrfs check still passes after the unmount;
#  - fsctl qgroup verify exits 0 where quota is on (after convert and after
#    the kernel wrote).
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/060-convert-fresh/cvlib.sh"
need_mount

# name size ndev quota mkfs-args
IMAGES=(
  "n4k-crc32c-single 320M 1 quota -n 4096 --csum crc32c -m single -d single"
  "n16k-xxhash-dup 320M 1 - -n 16384 --csum xxhash -m dup"
  "n64k-sha256-dup 512M 1 - -n 65536 --csum sha256 -m dup"
  "n16k-blake2-single 320M 1 quota -n 16384 --csum blake2 -m single"
  "n4k-blake2-dup-noholes 320M 1 - -n 4096 --csum blake2 -m dup -O ^no-holes"
  "raid1-2dev-16k-crc32c 320M 2 - -n 16384 --csum crc32c -m raid1 -d raid1"
)

populate() {  # MNT QUOTA
  local m=$1
  [ "$2" = quota ] && btrfs quota enable "$m"
  python3 - "$m" <<'PY'
import os, random, sys
m = sys.argv[1]
r = random.Random(60)
for i in range(160):
    os.makedirs(f"{m}/top/d{i % 8}", exist_ok=True)
    n = r.choice([0, 7, 900, 3000, 5000, 70000, 300000])
    with open(f"{m}/top/d{i % 8}/f{i}", "wb") as f:
        f.write(r.randbytes(n))
PY
  btrfs -q subvolume create "$m/sv"
  python3 - "$m/sv" <<'PY'
import os, random, sys
m = sys.argv[1]
r = random.Random(61)
for i in range(80):
    with open(f"{m}/g{i}", "wb") as f:
        f.write(r.randbytes(r.choice([10, 2000, 9000, 150000])))
PY
  fallocate -l 3M "$m/prealloc"
  python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.test", b"hello")' "$m/top/d1/f1"
  btrfs -q subvolume snapshot -r "$m/sv" "$m/snap"
  # Change the subvolume after the snapshot: shared and exclusive extents.
  head -c 100000 /dev/urandom >> "$m/sv/g1"
  rm -f "$m/sv/g2" "$m/sv/g3"
  cp --reflink=always "$m/sv/g4" "$m/sv/g4.clone"
  [ "$2" = quota ] && btrfs quota rescan -w "$m" >/dev/null
  sync
}

# mount, compare sums with $1, write new files, unmount, check; new sums in $T/sums.cur
mount_verify() {  # EXPECTED_SUMS TAG DEVS...
  local exp=$1 tag=$2; shift 2
  mount_fs "$T/mnt" "$@" || fail "$name: the kernel does not mount it after $tag"
  sums "$T/mnt" > "$T/sums.got"
  diff "$exp" "$T/sums.got" > /dev/null || { diff "$exp" "$T/sums.got" | head; fail "$name: files differ after $tag"; }
  write_more "$T/mnt" "$tag"
  sums "$T/mnt" > "$T/sums.cur"
  umount "$T/mnt"
  check_clean "$name after $tag and a kernel rw mount" "${checkdev[@]}"
}

for spec in "${IMAGES[@]}"; do
  read -r name size ndev quota args <<< "$spec"
  t0=$SECONDS
  devs=() checkdev=()
  for d in $(seq 1 "$ndev"); do
    rm -f "$T/$name.$d.img"; truncate -s "$size" "$T/$name.$d.img"
  done
  # shellcheck disable=SC2086
  mkfs.btrfs -q -f $args "$T/$name".*.img > /dev/null
  if [ "$ndev" -gt 1 ]; then
    # Multi-device: btrfs check and the kernel find the devices by scanning
    # block devices, so everything goes through loop devices.
    for d in $(seq 1 "$ndev"); do attach "$T/$name.$d.img"; devs+=("$LOOPDEV"); done
    btrfs device scan "${devs[@]}" > /dev/null
    checkdev=("${devs[0]}")
    mountdev=("${devs[0]}" "${devs[1]}")
  else
    devs=("$T/$name.1.img"); checkdev=("${devs[0]}"); mountdev=("${devs[0]}")
  fi
  mount_fs "$T/mnt" "${mountdev[@]}" || fail "$name: cannot mount the fresh image"
  populate "$T/mnt" "$quota"
  sums "$T/mnt" > "$T/sums.0"
  umount "$T/mnt"
  check_clean "$name fresh" "${checkdev[@]}"
  bgjson "$T/bg.0" "${devs[@]}"

  # --bg-tree
  "$FSCTL" convert --bg-tree --batch 2 --format json "${devs[@]}" > "$T/cv.json" || fail "$name: convert --bg-tree failed"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["block_groups_moved"]==j["block_groups_total"]>0 and j["commits"]>=2, j' "$T/cv.json"
  check_clean "$name after --bg-tree" "${checkdev[@]}"
  bgjson "$T/bg.1" "${devs[@]}"
  $CVTOOL bgs-same "$T/bg.0" "$T/bg.1" BLOCK_GROUP_TREE block-group-tree > /dev/null || fail "$name: block groups after --bg-tree"
  expect_features "${devs[0]}" bgt
  [ "$quota" = quota ] && { "$FSCTL" qgroup verify "${devs[@]}" > /dev/null || fail "$name: qgroup verify after --bg-tree"; }
  mount_verify "$T/sums.0" bgt "${mountdev[@]}"
  cp "$T/sums.cur" "$T/sums.1"
  bgjson "$T/bg.1k" "${devs[@]}"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["bg_tree_state"]["state"]=="block-group-tree"' "$T/bg.1k"
  [ "$quota" = quota ] && { "$FSCTL" qgroup verify "${devs[@]}" > /dev/null || fail "$name: qgroup verify after the kernel wrote to the bg-tree fs"; }

  # --no-bg-tree
  "$FSCTL" convert --no-bg-tree --batch 2 --format json "${devs[@]}" > "$T/cv.json" || fail "$name: convert --no-bg-tree failed"
  check_clean "$name after --no-bg-tree" "${checkdev[@]}"
  bgjson "$T/bg.2" "${devs[@]}"
  $CVTOOL bgs-same "$T/bg.1k" "$T/bg.2" EXTENT_TREE extent-tree > /dev/null || fail "$name: block groups after --no-bg-tree"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert not j["bg_tree_state"]["bg_tree_exists"], "tree 11 left behind"' "$T/bg.2"
  expect_features "${devs[0]}" extent
  [ "$quota" = quota ] && { "$FSCTL" qgroup verify "${devs[@]}" > /dev/null || fail "$name: qgroup verify after --no-bg-tree"; }
  mount_verify "$T/sums.1" extent "${mountdev[@]}"
  [ "$quota" = quota ] && { "$FSCTL" qgroup verify "${devs[@]}" > /dev/null || fail "$name: qgroup verify at the end"; }

  nbg=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["block_groups"]))' "$T/bg.0")
  echo "$name: $nbg block groups, $(wc -l < "$T/sums.0") files: --bg-tree and --no-bg-tree ok, check/mount/sha256/write ok$([ "$quota" = quota ] && echo ", qgroups verify") ($((SECONDS - t0)) s)"
  if [ "$ndev" -gt 1 ]; then cv_cleanup; CV_LOOPS=(); fi
  rm -f "$T/$name".*.img
done
echo ok
