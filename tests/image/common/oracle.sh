# SPDX-License-Identifier: GPL-2.0-only
# Reader oracle for image tests: compares fsctl inspect (JSON) with btrfs-progs'
# inspect-internal on the same image(s). Source after lib.sh.
#   oracle_compare LABEL [--fixture NAME.json] [--bgs-only] [--min-level N] IMG [IMG2...]
# (--min-level: also require the extent and fs trees to reach that level)
# (a) dump-super fields of every copy, (b) every tree's blocks and keys in DFS
# order, (c) block groups vs the BLOCK_GROUP_ITEMs progs lists (and the
# fixture JSON's block_groups.list). Returns non-zero on any difference.
ORACLE_PY="$(dirname "${BASH_SOURCE[0]}")/progs_oracle.py"

oracle_compare() {
  local label=$1; shift
  local fixture="" bgs_only=0 min_level=""
  while [ $# -gt 0 ]; do
    case $1 in
      --fixture) fixture=$2; shift 2 ;;
      --min-level) min_level=$2; shift 2 ;;
      --bgs-only) bgs_only=1; shift ;;
      *) break ;;
    esac
  done
  local d="$T/oracle-$label" rc=0
  mkdir -p "$d"
  echo "== $label"
  # The progs dump of all trees also carries every BLOCK_GROUP_ITEM (extent
  # tree and block group tree): the same lines `dump-tree -t extent` prints.
  btrfs inspect-internal dump-tree --dfs --noscan --hide-names "$@" > "$d/progs.tree" 2> "$d/progs.tree.err" ||
    { echo "  progs dump-tree failed: $(head -3 "$d/progs.tree.err")"; return 1; }
  "$FSCTL" inspect block-groups --format json "$@" > "$d/fsctl.bg.json" 2> "$d/fsctl.bg.err" ||
    { echo "  fsctl block-groups failed: $(cat "$d/fsctl.bg.err")"; rc=1; }
  if [ $rc -eq 0 ]; then
    python3 "$ORACLE_PY" bgs "$d/fsctl.bg.json" "$d/progs.tree" ${fixture:+--fixture "$fixture"} || rc=1
  fi
  [ $bgs_only -eq 1 ] && return $rc
  # progs exits 1 when a copy has no magic but prints the others: compare those
  btrfs inspect-internal dump-super -f -a "$@" > "$d/progs.super" 2> "$d/progs.super.err" || true
  grep -q '^superblock: bytenr=' "$d/progs.super" || { echo "  progs dump-super failed: $(head -3 "$d/progs.super.err")"; return 1; }
  if "$FSCTL" inspect dump-super --all-mirrors --format json "$@" > "$d/fsctl.super.json" 2> "$d/fsctl.super.err"; then
    python3 "$ORACLE_PY" super "$d/fsctl.super.json" "$d/progs.super" || rc=1
  else
    echo "  fsctl dump-super failed: $(cat "$d/fsctl.super.err")"; rc=1
  fi
  if "$FSCTL" inspect dump-tree --format json "$@" > "$d/fsctl.tree.json" 2> "$d/fsctl.tree.err"; then
    python3 "$ORACLE_PY" trees "$d/fsctl.tree.json" "$d/progs.tree" ${min_level:+--min-level "$min_level"} || rc=1
  else
    echo "  fsctl dump-tree failed (rc $?): $(head -3 "$d/fsctl.tree.err")"; rc=1
  fi
  if [ -s "$d/fsctl.tree.err" ] || [ -s "$d/fsctl.bg.err" ]; then
    echo "  fsctl warnings:"; cat "$d/fsctl.tree.err" "$d/fsctl.bg.err" | head -5 | sed 's/^/    /'
  fi
  return $rc
}

# Mount points made by fill_image; unmounted by oracle_cleanup (call it from a trap).
ORACLE_MOUNTS=()
oracle_cleanup() {
  local m
  for m in "${ORACLE_MOUNTS[@]}"; do mountpoint -q "$m" && umount "$m"; done
  return 0
}

# Writes NFILES files into directory DIR: half small (inline extents), half
# 6 KiB (regular data extents with csums), in subdirectories of 200, names
# long enough to fill leaves quickly.
write_files() {
  python3 - "$1" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "dir%03d" % (i // 200))
    os.makedirs(d, exist_ok=True)
    size = 100 + i % 300 if i % 2 else 6144 + i % 1000
    with open(os.path.join(d, "file-with-a-longer-name-%06d" % i), "wb") as f:
        f.write(bytes([(i * 7 + j) & 0xFF for j in range(size)]))
PY
}

# mkimg_filled IMG SIZE NFILES EXTRA [mkfs args...]: an image with NFILES
# files. Through a loop mount (kernel-written trees) when it works, else with
# mkfs --rootdir from a directory (then EXTRA is not done and a note is
# printed). EXTRA=extra also makes subvolumes, snapshots (ro and rw, one
# changed after the snapshot), quota with a level-1 qgroup and an xattr: qgroup
# keys, uuid tree items, ROOT_REF/ROOT_BACKREF, shared tree blocks.
ORACLE_CAN_MOUNT=""
mkimg_filled() {
  local img=$1 size=$2 n=$3 extra=$4; shift 4
  local mnt="$T/mnt.$(basename "$img")"
  if [ -z "$ORACLE_CAN_MOUNT" ]; then
    ORACLE_CAN_MOUNT=no
    if [ "$(id -u)" -eq 0 ]; then
      mkimg "$T/.probe.img" 128M
      mkdir -p "$T/.probe.mnt"
      if mount -o loop "$T/.probe.img" "$T/.probe.mnt" 2>/dev/null; then
        umount "$T/.probe.mnt"; ORACLE_CAN_MOUNT=yes
      fi
      rm -f "$T/.probe.img"
    fi
    [ $ORACLE_CAN_MOUNT = yes ] || echo "NOTE: no loop mount here: filling images with mkfs --rootdir, no subvolumes/quota"
  fi
  if [ $ORACLE_CAN_MOUNT = no ]; then
    rm -rf "$mnt"; mkdir -p "$mnt"
    write_files "$mnt" "$n"
    mkimg "$img" "$size" "$@" -r "$mnt"
    rm -rf "$mnt"
    return 0
  fi
  mkimg "$img" "$size" "$@"
  mkdir -p "$mnt"
  mount -o loop "$img" "$mnt"
  ORACLE_MOUNTS+=("$mnt")
  write_files "$mnt" "$n"
  if [ "$extra" = extra ]; then
    btrfs -q quota enable "$mnt"
    btrfs -q subvolume create "$mnt/sv1" >/dev/null
    btrfs -q subvolume create "$mnt/sv2" >/dev/null
    write_files "$mnt/sv1" 400
    write_files "$mnt/sv2" 50
    btrfs -q subvolume snapshot "$mnt/sv1" "$mnt/sv1.snap" >/dev/null
    btrfs -q subvolume snapshot -r "$mnt/sv2" "$mnt/sv2.ro" >/dev/null
    echo changed > "$mnt/sv1/dir000/file-with-a-longer-name-000001"
    btrfs -q qgroup create 1/100 "$mnt"
    btrfs -q qgroup assign --no-rescan 0/256 1/100 "$mnt" 2>/dev/null || true
    btrfs -q qgroup assign --no-rescan 0/257 1/100 "$mnt" 2>/dev/null || true
    btrfs -q quota rescan -w "$mnt" >/dev/null 2>&1 || true
    setfattr -n user.test -v hello "$mnt/sv1/dir000" 2>/dev/null || true
  fi
  umount "$mnt"
}
