#!/usr/bin/env bash
# 062-convert-fixtures-bgt: conversions on ../shared/fixtures-bgt, where
# btrfs-progs made the block group tree or left a conversion half done.
#  - half-to-bgt (btrfstune --convert-to-block-group-tree killed after 6
#    commits: 84 items in the extent tree, 80 in tree 11) and
#    progs-half-converted-bgt (btrfs-progs' own test image, 2/3): inspect
#    block-groups reports "converting-to-bg-tree" with the fixture's counts and
#    the moved groups are the highest; `--bg-tree` resumes and finishes;
#  - half-from-bgt (--convert-from-block-group-tree killed after 6 commits;
#    btrfstune itself cannot resume it, FORMAT.md section 4): reported as
#    "converting-from-bg-tree"; `--no-bg-tree` finishes it;
#  - bgt-native-16k (mkfs 6.19 -O block-group-tree, quota): `--no-bg-tree`;
#    (bgt-converted-4k, btrfstune's finished result, is left out for time: its
#    reverse is what half-from-bgt finishes, from the same btrfstune-made tree
#    11 with its refs-0 ROOT_ITEM);
#  - many-qgroups-16k (704 qgroups, 700 subvolumes): `--bg-tree`;
# and then each is converted back the other way. After every step: btrfs
# check --readonly passes (many-qgroups: says what it said before, a known
# progs qgroup-loader bug), the block group set is unchanged with every item in
# the asked tree, fsctl qgroup verify exits 0, and the kernel mounts it rw with
# every file's sha256 as in the fixture JSON (half-to: bgt-source-4k's list,
# half-from: bgt-converted-4k's, as the JSONs say), takes new files, and btrfs
# check passes after the unmount. For the 260 GiB *-4k images the 160 GiB of
# preallocated files (which read as zeros) are checked by size and their first
# and last MiB, not hashed whole (time budget).
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/060-convert-fresh/cvlib.sh"
need_root
FX=$SHARED/fixtures-bgt
[ -f "$FX/MANIFEST.json" ] || skip "no fixtures at $FX (they live beside the repo in ../shared)"
MOUNT=1
( need_mount ) > /dev/null 2>&1 || { MOUNT=0; echo "NOTE: mount -o loop unavailable: kernel mount parts skipped"; }

IMG=$T/img
jget() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): j=j[k]
print(j)' "$1" "$2"; }

check_ok() {  # WHAT
  if [ -n "$checkref" ]; then
    btrfs check --readonly "$IMG" > "$T/check.out" 2>&1 && return 0
    diff <(grep -E "ERROR|are different" "$checkref") <(grep -E "ERROR|are different" "$T/check.out") > /dev/null ||
      { diff "$checkref" "$T/check.out" | head -20; fail "$1: btrfs check says something else than before"; }
    return 0
  fi
  check_clean "$1" "$IMG"
}
qgroups_ok() {
  [ "$quota" = 1 ] || return 0
  "$FSCTL" qgroup verify "$IMG" > "$T/qv.out" || { tail "$T/qv.out"; fail "$1: qgroup verify"; }
}
mount_ok() {  # TAG
  [ "$MOUNT" = 1 ] || return 0
  mount_fs "$T/mnt" "$IMG" || fail "$name: the kernel does not mount it after $1"
  if [ -n "$files" ]; then
    $CVTOOL files-json "$files" "$T/mnt" > "$T/files.out" || { cat "$T/files.out"; fail "$name: files differ after $1"; }
    nfiles=$(grep -o '^[0-9]*' "$T/files.out")
  else
    nfiles=$(find "$T/mnt" -type f | wc -l)
  fi
  write_more "$T/mnt" "$1"
  umount "$T/mnt"
  check_ok "$name after $1 and a kernel rw mount"
  qgroups_ok "$name after $1 and a kernel rw mount"
}
# convert DIRECTION TREE STATE TAG: run, then every check.
convert() {
  "$FSCTL" convert "$1" --batch 16 --format json "$IMG" > "$T/cv.json" || fail "$name: convert $1 failed"
  check_ok "$name after $1"
  bgjson "$T/bg.new" "$IMG"
  $CVTOOL bgs-same "$T/bg.cur" "$T/bg.new" "$2" "$3" > /dev/null || fail "$name: block groups after $1"
  expect_features "$IMG" "$4"
  qgroups_ok "$name after $1"
  mount_ok "$4"
  bgjson "$T/bg.cur" "$IMG"
  local res=""
  [ "$(jget "$T/cv.json" resumed)" = True ] && res=", resumed"
  summary+=" $1 ok (moved $(jget "$T/cv.json" block_groups_moved), $(jget "$T/cv.json" commits) commits$res);"
}
# half STATE IN_EXTENT IN_BGT: the half state as fsctl reports it.
half() {
  bgjson "$T/bg.cur" "$IMG"
  read -r st ne nb < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["bg_tree_state"]
print(s["state"], s["in_extent_tree"], s["in_block_group_tree"])' "$T/bg.cur")
  [ "$st $ne $nb" = "$1 $2 $3" ] || fail "$name: inspect block-groups says $st $ne/$nb, expect $1 $2/$3"
  $CVTOOL bgs-split "$T/bg.cur" "$T/bg.cur" > /dev/null || fail "$name: the half state is not a clean split"
  "$FSCTL" inspect block-groups "$IMG" > "$T/bg.txt"
  head -1 "$T/bg.txt" | grep_q "$1" || fail "$name: text output does not name the state"
  summary+=" reported as $1 ($2 in the extent tree, $3 in tree 11);"
}

ran=0
for name in half-to-bgt half-from-bgt progs-half-converted-bgt bgt-native-16k many-qgroups-16k; do
  t0=$SECONDS
  rm -f "$IMG"
  if [ -f "$FX/$name.img.zst" ]; then
    $CVTOOL unpack-zst "$FX/$name.img.zst" "$IMG" > /dev/null
  elif [ -f "$FX/$name.raw.xz" ]; then
    xz -dc "$FX/$name.raw.xz" > "$IMG"
  else
    echo "NOTE: $name absent"; continue
  fi
  summary=""
  checkref=""
  quota=0; [ "$(jget "$FX/$name.json" quota.enabled 2>/dev/null)" = True ] && quota=1
  case $name in
    half-to-bgt) files=$FX/bgt-source-4k.json ;;
    half-from-bgt) files=$FX/bgt-converted-4k.json ;;
    progs-half-converted-bgt) files="" ;;
    *) files=$FX/$name.json ;;
  esac
  [ -n "$files" ] && [ ! -f "$files" ] && files=""
  case $name in
    half-to-bgt|progs-half-converted-bgt)
      half converting-to-bg-tree "$(jget "$FX/$name.json" block_groups.in_extent_tree)" "$(jget "$FX/$name.json" block_groups.in_block_group_tree)"
      convert --bg-tree BLOCK_GROUP_TREE block-group-tree bgt
      convert --no-bg-tree EXTENT_TREE extent-tree extent ;;
    half-from-bgt)
      half converting-from-bg-tree "$(jget "$FX/$name.json" block_groups.in_extent_tree)" "$(jget "$FX/$name.json" block_groups.in_block_group_tree)"
      convert --no-bg-tree EXTENT_TREE extent-tree extent
      convert --bg-tree BLOCK_GROUP_TREE block-group-tree bgt ;;
    bgt-native-16k)
      bgjson "$T/bg.cur" "$IMG"
      convert --no-bg-tree EXTENT_TREE extent-tree extent
      convert --bg-tree BLOCK_GROUP_TREE block-group-tree bgt ;;
    many-qgroups-16k)
      if ! btrfs check --readonly "$IMG" > "$T/check.ref" 2>&1; then
        grep -q "loading qgroups from disk" "$T/check.ref" || { tail "$T/check.ref"; fail "$name: btrfs check fails on the fixture as shipped"; }
        checkref=$T/check.ref
      fi
      bgjson "$T/bg.cur" "$IMG"
      convert --bg-tree BLOCK_GROUP_TREE block-group-tree bgt
      convert --no-bg-tree EXTENT_TREE extent-tree extent ;;
  esac
  echo "$name:$summary check ok$([ "$quota" = 1 ] && echo ", qgroups verify")$([ "$MOUNT" = 1 ] && echo ", mounted rw with ${nfiles:-?} files$([ -n "$files" ] && echo " matching $(basename "$files")")") ($((SECONDS - t0)) s)"
  ran=$((ran + 1))
  rm -f "$IMG"
done
[ "$ran" -gt 0 ] || skip "no fixture image found in $FX"
echo ok
