#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/convert.sh: `fsctl convert --bg-tree` (and back, --no-bg-tree) against
# btrfs-progs' `btrfstune --convert-to-block-group-tree` (and
# --convert-from-block-group-tree), optionally against an older fsctl too,
# and the kernel's mount time and mount read I/Os before and after the
# conversion, all in one run (issues 5, 11 and 14).
#
# Tools, alternated run by run (bench/lib.sh order_for: in run 1 old, new,
# reference; in run 2 new, reference, old; ...):
#   new   fsctl (--fsctl)
#   old   a second fsctl (--fsctl-old), e.g. the commit before a refactoring:
#         the new/old median ratio says whether the change slowed it down
#   ref   btrfstune from the reference btrfs-progs build (--progs DIR): when it
#         is missing or lacks the option, the reference is "not measured"
#         (no figure from elsewhere is printed in its place)
# For each image, run and tool, on a fresh copy (cp --sparse=always), with the
# page cache dropped before every timed command (sync; echo 3 > drop_caches):
#   1. the conversion to the block group tree: wall time, CPU time (user +
#      sys), the time its main thread waited for a CPU (run-queue wait from
#      /proc/PID/schedstat: on a loaded machine wall minus that is about what
#      the run would take alone), peak RSS (/usr/bin/time -v), commits
#      (superblock generation delta), tree blocks written and reserved/used
#      metadata (fsctl's JSON); then `btrfs check --readonly` and
#      `fsctl inspect block-groups` on the result.
#   2. (unless --no-reverse) the conversion back on the same copy, timed and
#      checked the same way.
#   Then, once per image, kernel `mount -o ro` of the unconverted image and of
#   the new fsctl's converted copy of run 1 through a read-only loop device:
#   wall time of mount(8), and reads completed / sectors read from
#   /sys/block/loopN/stat just before and after mounting.
# Every timed command (conversions of all tools, mounts) runs under
# nice -n $NICE (default -10; 0 = off): on a shared machine it keeps other
# jobs from stretching the short runs. The run-queue wait is still shown, and
# the load average before and after and at every timed command is printed.
# Per job and tool: min/median/max wall seconds, median CPU and wall minus
# run-queue wait, peak RSS; the median ratios new/ref and new/old; a "row:"
# line for the table at the top of bench/RESULTS.md. The targets of issue 5
# are judged on the medians (against the measured reference only), and
# those of issue 14: btrfstune / fsctl >= 8x, and fsctl within 2x of the I/O
# floor (io_floor below: dd writing what fsctl wrote and reading the leaves
# that hold block group items, on the same file system in the same run; it
# also prints btrfstune / floor, the most any tool could gain here). The
# issue 5 targets:
#   btrfstune / fsctl >= 4x (and fsctl < 1 s for 7,003 block groups),
#   fsctl peak RSS < cache budget (256 MiB) + 64 MiB,
#   mount read I/Os after conversion >= 40x fewer than before.
#
# Needs root (drop_caches, loop devices, mount), btrfs-progs, GNU time, zstd,
# tar, python3 (to fill the 4K images).
#
# Usage: bench/convert.sh [--fsctl PATH] [--fsctl-old PATH] [--progs DIR]
#                         [--btrfs PATH] [--runs N] [--mount-runs N] [--batch N]
#                         [--nice N] [--only NAME | --all] [--no-reverse]
#                         [--build-only]
#   --fsctl PATH       fsctl binary (default: $FSCTL or build/fsctl); use a Release
#                      build (bench/build-fsctl.sh REV makes one of any commit)
#   --fsctl-old PATH   an older fsctl run side by side (default: none)
#   --progs DIR        reference btrfs-progs build (default /var/tmp/btrfs-progs-ref,
#                      ../shared/tools/build-btrfs-progs.sh makes it): DIR/btrfstune
#   --btrfs PATH       btrfs for the checks and image facts (default: btrfs on PATH)
#   --runs N           conversions per tool and image (default 3), each on a fresh copy
#   --mount-runs N     mounts before and after (default 3; 0 = none)
#   --batch N          pass --batch N to both fsctl (default: fsctl's own default)
#   --nice N           niceness of the timed commands (default $NICE or -10; 0 = off)
#   --only NAME        measure this image instead of bg-8T-16k: bg-8T-16k, bg-8T-4k
#                      or bg-2T-4k
#   --all              bg-8T-16k and bg-8T-4k
#   --no-reverse       leave out the conversions back
#   --build-only       make the cached images and exit
# Images (cached under $FSCTL_BENCH_DIR, default /var/tmp/fsctl-bench, never
# inside the repository):
#   bg-8T-16k  ../shared/bench-images/bg-8T-16k.tar.zst restored into
#              $FSCTL_BENCH_DIR/bg-8T-16k/ (shared with bench/qgroup.sh; 8 TiB
#              sparse, nodesize 16K, 7,003 block groups, BG items in 7,001 leaves)
#   bg-8T-4k   (convert/) made here the way bg-8T-16k was made, at nodesize 4K:
#              mkfs.btrfs (nodesize 4K, metadata DUP, data single, free space
#              tree, no-holes, no block-group-tree) on an 8 TiB sparse file;
#              through a loop mount, subvolumes sv0..sv3 and 7,000 files of
#              1 GiB (f00000.., file i in sv(i % 4)), each fallocated in 4 MiB
#              pieces (one posix_fallocate per piece: 256 same-size-class
#              extents per 1 GiB data block group, so each block group item
#              ends up in its own extent-tree leaf; FORMAT.md section 5); then
#              snapshot snap0 of sv0, quota enable (and its rescan), level-1
#              qgroup 1/100 with members 0/256 and 0/257, rescan -w. About
#              7,003 block groups; the fill takes 10+ minutes. Fill and quota
#              times go to $FSCTL_BENCH_DIR/convert/build.log.
#   bg-2T-4k   (convert/) the earlier, smaller 4K image: 2 TiB sparse, 1,600 GiB
#              fallocated the same way into 100 GiB files in the top-level
#              subvolume, no quota; 1,603 block groups
# Working copies go to $FSCTL_BENCH_DIR/convert/work and are removed at exit.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
CACHE=$BENCH_DIR/convert
RUNS=3
MOUNT_RUNS=3
BATCH=
ONLY=bg-8T-16k
REVERSE=1
BUILD_ONLY=0

while [ $# -gt 0 ]; do
  case $1 in
    --fsctl) FSCTL=$2; shift 2 ;;
    --fsctl-old) FSCTL_OLD=$2; shift 2 ;;
    --progs) PROGS=$2; shift 2 ;;
    --btrfs) BTRFS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --mount-runs) MOUNT_RUNS=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --nice) NICE=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --all) ONLY=all; shift ;;
    --no-reverse) REVERSE=0; shift ;;
    --build-only) BUILD_ONLY=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done

bench_preflight

# --- images -----------------------------------------------------------------
mkdir -p "$CACHE"

# fill_4k: makes $PARTIAL (a sparse file of $FILL_SIZE) with Debian's
# mkfs.btrfs at nodesize 4K and fills $FILL_GIB GiB through a loop mount in
# 4 MiB pieces (one posix_fallocate per piece).
#   FILL_LAYOUT=flat     files of 100 GiB in the top-level subvolume (bg-2T-4k)
#   FILL_LAYOUT=subvols  as bg-8T-16k: subvolumes sv0..sv3, files f00000.. of
#                        1 GiB, file i in sv(i % 4); then snapshot snap0 of sv0,
#                        quota enable (waiting for its rescan), qgroup 1/100
#                        with members 0/256 and 0/257, rescan -w
# Times go to stdout and to $CACHE/build.log.
fill_4k() {
  set -euo pipefail
  local img=$PARTIAL loop mnt t0 t1 t2 msg
  rm -f "$img"
  truncate -s "$FILL_SIZE" "$img"
  mkfs.btrfs -q -f -n 4096 -s 4096 -m dup -d single -O no-holes -R free-space-tree -L "$FILL_LABEL" "$img"
  loop=$(losetup -f --show "$img")
  mnt=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "umount '$mnt' 2>/dev/null || true; losetup -d '$loop' 2>/dev/null || true; rmdir '$mnt' 2>/dev/null || true" EXIT
  mount "$loop" "$mnt"
  if [ "$FILL_LAYOUT" = subvols ]; then
    for i in 0 1 2 3; do btrfs -q subvolume create "$mnt/sv$i"; done
  fi
  t0=$SECONDS
  python3 - "$mnt" "$FILL_GIB" "$FILL_LAYOUT" <<'EOF'
import os, sys
mnt, gib, layout = sys.argv[1], int(sys.argv[2]), sys.argv[3]
piece = 4 << 20
if layout == "subvols":
    per_file = 1 << 30
    path = lambda n: os.path.join(mnt, "sv%d" % (n % 4), "f%05d" % n)
else:
    per_file = 100 << 30
    path = lambda n: os.path.join(mnt, "fill-%03d" % n)
total = gib << 30
done, n = 0, 0
while done < total:
    fd = os.open(path(n), os.O_CREAT | os.O_WRONLY, 0o644)
    end = min(total, done + per_file)
    off = 0
    while done < end:
        os.posix_fallocate(fd, off, piece)
        off += piece
        done += piece
    os.close(fd)
    n += 1
EOF
  sync
  t1=$SECONDS
  msg="$(date -u '+%Y-%m-%d %H:%M UTC') $FILL_LABEL: filled $FILL_GIB GiB in $((t1 - t0)) s (load $(cut -d' ' -f1-3 /proc/loadavg))"
  if [ "$FILL_LAYOUT" = subvols ]; then
    btrfs -q subvolume snapshot "$mnt/sv0" "$mnt/snap0"
    btrfs quota enable "$mnt"
    btrfs quota rescan -W "$mnt" > /dev/null  # the rescan that enable starts
    btrfs qgroup create 1/100 "$mnt"
    # each assign warns "quotas may be inconsistent, rescan needed": the rescan follows
    btrfs qgroup assign --no-rescan 0/256 1/100 "$mnt"
    btrfs qgroup assign --no-rescan 0/257 1/100 "$mnt"
    btrfs quota rescan -w "$mnt" > /dev/null
    sync
    t2=$SECONDS
    msg="$msg; snapshot, quota enable, qgroup 1/100 and rescans in $((t2 - t1)) s"
    btrfs qgroup show -p "$mnt" 2>&1 | sed 's/^/  /'
  fi
  echo "$msg" | tee -a "$CACHE/build.log"
  umount "$mnt"
  losetup -d "$loop"
  rmdir "$mnt"
  trap - EXIT
}
export -f fill_4k
export CACHE

make_bg4k() {  # LABEL SIZE FILL_GIB LAYOUT
  FILL_LABEL=$1 FILL_SIZE=$2 FILL_GIB=$3 FILL_LAYOUT=$4 build_once "$CACHE/$1.img" bash -c fill_4k
  echo "$CACHE/$1.img"
}

# image_info IMG: one cached line: block groups by type, leaves holding the
# BG items, extent tree size (from btrfs inspect-internal dump-tree).
image_info() {
  local img=$1 info=$1.info
  if [ ! -s "$info" ] || [ "$info" -ot "$img" ]; then
    "$BTRFS" inspect-internal dump-tree -t extent "$img" 2>/dev/null | awk '
      /^leaf [0-9]+ items/ { leaves++; cur = $2 }
      /^node [0-9]+ level/ { nodes++ }
      /^\titem [0-9]+ key \([0-9]+ BLOCK_GROUP_ITEM / { bg++; if (!(cur in seen)) { seen[cur] = 1; bgleaves++ } }
      END { printf "%d block group items in %d extent-tree leaves; extent tree %d leaves + %d nodes\n", bg, bgleaves, leaves, nodes }' \
      > "$info.tmp"
    mv "$info.tmp" "$info"
  fi
  cat "$info"
}

IMGS=()
case $ONLY in
  bg-8T-16k) IMGS+=("$(restore_bg8t "$BENCH_DIR/bg-8T-16k")") ;;
  bg-8T-4k) IMGS+=("$(make_bg4k bg-8T-4k 8T 7000 subvols)") ;;
  bg-2T-4k) IMGS+=("$(make_bg4k bg-2T-4k 2T 1600 flat)") ;;
  all) IMGS+=("$(restore_bg8t "$BENCH_DIR/bg-8T-16k")" "$(make_bg4k bg-8T-4k 8T 7000 subvols)") ;;
esac
[ ${#IMGS[@]} -gt 0 ] || die "--only: unknown image $ONLY"
for img in "${IMGS[@]}"; do [ -s "$img" ] || die "no image $img"; image_info "$img" > /dev/null; done
if [ "$BUILD_ONLY" = 1 ]; then
  for img in "${IMGS[@]}"; do echo "$img: $(image_info "$img")"; done
  exit 0
fi

label_of() {
  case $1 in
    */huge.img) echo bg-8T-16k ;;
    *) basename "$1" .img ;;
  esac
}

# --- measurement ------------------------------------------------------------
WORK=$CACHE/work
mkdir -p "$WORK"
WORK=$(mktemp -d "$WORK/run.XXXXXX")
MNT=$WORK/mnt
mkdir -p "$MNT"
LOOP=
cleanup() {
  if mountpoint -q "$MNT" 2>/dev/null; then umount "$MNT" || true; fi
  if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# drop_caches, now_ns, gen_of, fresh_copy, timed (T_WALL T_CPU T_RUNQ T_RSS T_RC): bench/lib.sh

# check_img IMG: "ok" or "FAILED (rc N)"; full output in $WORK/check.out
check_img() {
  set +e
  "$BTRFS" check --readonly "$1" > "$WORK/check.out" 2>&1
  local rc=$?
  set -e
  if [ $rc = 0 ]; then echo ok; else echo "FAILED (rc $rc)"; fi
}

# bg_where IMG: "STATE: N in bg tree, M in extent tree" from fsctl inspect block-groups
# resv_used JSON: fsctl's reserved and used metadata bytes (issue 4), MB.
resv_used() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.0f/%.0f" % (d["reserved_bytes"]/1e6, d["used_bytes"]/1e6))' "$1" 2>/dev/null || echo "?"
}
bg_where() {
  "$FSCTL" --format json inspect block-groups "$1" 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)["bg_tree_state"]
print("%s: %d in bg tree, %d in extent tree" % (s["state"], s["in_block_group_tree"], s["in_extent_tree"]))' 2>/dev/null || echo "?"
}

# mount_measure IMG: sets M_MS, M_IOS, M_SECT (one ro mount, caches dropped)
mount_measure() {
  local img=$1 dev r1 s1 r2 s2 rest t0 t1
  LOOP=$(losetup -f --show -r "$img")
  dev=${LOOP#/dev/}
  udevadm settle 2>/dev/null || true
  drop_caches
  read -r r1 _ s1 rest < "/sys/block/$dev/stat"
  t0=$(now_ns)
  nice -n "$NICE" mount -t btrfs -o ro "$LOOP" "$MNT"
  t1=$(now_ns)
  read -r r2 _ s2 rest < "/sys/block/$dev/stat"
  umount "$MNT"
  losetup -d "$LOOP"
  LOOP=
  M_MS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) / 1e6 }')
  M_IOS=$((r2 - r1))
  M_SECT=$((s2 - s1))
}

# io_floor LEAVES BLOCKS COPIES NODESIZE: the I/O floor of a conversion on
# this machine, measured now with dd in the working directory (the image's
# file system): writing BLOCKS * COPIES tree blocks (every block the
# conversion writes, on each metadata copy: DUP writes two) and reading back
# LEAVES of them (the extent-tree leaves that hold block group items, which
# any converter must read), both O_DIRECT in 4 MiB requests, page cache
# dropped first. Sets F_READ, F_WRITE and F_SECONDS (their sum, the
# median of 3). A converter cannot beat it without writing less.
io_floor() {
  local leaves=$1 blocks=$2 copies=$3 ns=$4 f=$WORK/floor.dd wb rb i t0 t1 t2 sums=()
  wb=$((blocks * copies * ns)) rb=$((leaves * ns))
  for i in 1 2 3; do
    drop_caches
    t0=$(now_ns)
    dd if=/dev/zero of="$f" bs=4M count=$(((wb + 4194303) / 4194304)) oflag=direct conv=fsync status=none
    t1=$(now_ns)
    drop_caches
    dd if="$f" of=/dev/null bs=4M count=$(((rb + 4194303) / 4194304)) iflag=direct status=none
    t2=$(now_ns)
    rm -f "$f"
    sums+=("$(awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "%.3f %.3f %.3f", (b - a) / 1e9, (c - b) / 1e9, (c - a) / 1e9 }')")
  done
  read -r F_WRITE F_READ F_SECONDS < <(printf '%s\n' "${sums[@]}" | sort -k3 -n | sed -n 2p)
  F_WB=$wb F_RB=$rb
}

# The reference: btrfstune of the reference build, when it has the option.
BTRFSTUNE=$PROGS/btrfstune
have_tune=0 tune_why=
if [ ! -x "$BTRFSTUNE" ]; then tune_why="no $BTRFSTUNE"
elif ! grep -q -- --convert-to-block-group-tree < <("$BTRFSTUNE" --help 2>&1); then tune_why="$BTRFSTUNE has no --convert-to-block-group-tree"
else have_tune=1; fi
tune_version=$( [ -x "$PROGS/btrfs" ] && "$PROGS/btrfs" --version 2>/dev/null | head -1 | awk '{ print $2 }' || true)
REF_LABEL="btrfstune ${tune_version:-?}"
set_tools "$have_tune"

if [ "$have_tune" = 1 ]; then
  ref_line="reference: $BTRFSTUNE ($(echo "$tune_version" | sed 's/^$/version unknown/'), $PROGS/btrfs --version) --convert-to-block-group-tree / --convert-from-block-group-tree"
else
  ref_line="reference: not measured ($tune_why)"
fi
bench_header "$ref_line" "fsctl: convert --bg-tree${BATCH:+ --batch $BATCH}$([ "$REVERSE" = 0 ] || echo ", then convert --no-bg-tree on the same copy")" \
  "conversions on fresh sparse copies; mounts ro through a read-only loop device, also under nice -n $NICE"
echo

# one_tool TOOL RUN IMG LABEL: the conversion (and back) by one tool on a fresh copy
rfmt='%-14s %-9s %3s | %8s %6s %7s %8s %7s %7s %11s | %-13s | %s\n'
one_tool() {
  local tool=$1 run=$2 img=$3 label=$4 copy g0 g1 blocks resv ck bin dir job
  copy=$WORK/$label.$tool.img
  fresh_copy "$img" "$copy"
  for dir in to from; do
    if [ "$dir" = to ]; then job="convert --bg-tree"; else job="convert --no-bg-tree"; [ "$REVERSE" = 1 ] || break; fi
    g0=$(gen_of "$copy")
    if [ "$tool" = ref ]; then
      timed "$WORK/out" nice -n "$NICE" "$BTRFSTUNE" --convert-$dir-block-group-tree "$copy"
      blocks=- resv=-
    else
      bin=$(fsctl_of "$tool")
      timed "$WORK/out" nice -n "$NICE" "$bin" --format json convert "$([ "$dir" = to ] && echo --bg-tree || echo --no-bg-tree)" ${BATCH:+--batch "$BATCH"} "$copy"
      blocks=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tree_blocks_written"])' "$WORK/out" 2>/dev/null || echo "?")
      if [ "$dir" = to ] && [ "$tool" = new ] && [ "$run" = 1 ]; then BLOCKS_WRITTEN=$blocks; fi
      resv=$(resv_used "$WORK/out")
    fi
    record "$job" "$tool"
    g1=$(gen_of "$copy")
    ck=$(check_img "$copy")
    printf "$rfmt" "${job#convert }" "${TOOL_NAME[$tool]#fsctl }" "$run" "$T_WALL" "$T_CPU" "$T_RUNQ" "$T_RSS" "$((g1 - g0))" "$blocks" "$resv" "$ck" "$(bg_where "$copy")"
    [ "$ck" = ok ] || { ALL_OK=0; sed 's/^/    check: /' "$WORK/check.out" | head -20; }
    [ "$T_RC" = 0 ] || { ALL_OK=0; echo "    exit $T_RC:"; sed 's/^/    /' "$WORK/out" | head -20; }
    if [ "$dir" = to ] && [ "$tool" = new ] && [ "$run" = 1 ] && [ "$MOUNT_RUNS" -gt 0 ]; then
      # kept for the mounts after conversion
      fresh_copy "$copy" "$WORK/$label.converted.img"
    fi
  done
  rm -f "$copy"
}

ALL_OK=1
ALL_MET=1
for img in "${IMGS[@]}"; do
  label=$(label_of "$img")
  nodesize=$("$BTRFS" inspect-internal dump-super "$img" 2>/dev/null | awk '$1 == "nodesize" {print $2}')
  nbg=$("$FSCTL" --format json inspect block-groups "$img" 2>/dev/null |
    python3 -c 'import json, sys; print(len(json.load(sys.stdin)["block_groups"]))' 2>/dev/null || echo "?")
  echo "== $label: $img ($(du -h "$img" | cut -f1) allocated), nodesize $nodesize, $nbg block groups"
  echo "   $(image_info "$img")"
  echo "   load average before: $(loadavg)"
  echo

  printf "$rfmt" job tool run "wall s" "cpu s" "runq s" "RSS MiB" commits "blocks" "resv/used MB" check "block groups after (fsctl inspect)"
  for run in $(seq 1 "$RUNS"); do
    for tool in $(order_for "$run"); do
      one_tool "$tool" "$run" "$img" "$label"
    done
  done
  echo "   load average after: $(loadavg)"
  echo

  # Mounts: the unconverted image (read-only loop on the cached image itself)
  # and the new fsctl's converted copy of run 1.
  bi_lo='' ai_hi='' bm='' am=''
  if [ "$MOUNT_RUNS" -gt 0 ]; then
    mfmt='%-24s %3s | %9s %10s %9s\n'
    printf "$mfmt" "mount -o ro" run "ms" "read I/Os" "MB read"
    b_ms=() b_ios=() a_ms=() a_ios=()
    for run in $(seq 1 "$MOUNT_RUNS"); do
      mount_measure "$img"
      printf "$mfmt" "before conversion" "$run" "$M_MS" "$M_IOS" "$(awk -v s="$M_SECT" 'BEGIN{printf "%.1f", s*512/1e6}')"
      b_ms+=("$M_MS") b_ios+=("$M_IOS")
      mount_measure "$WORK/$label.converted.img"
      printf "$mfmt" "after (fsctl new)" "$run" "$M_MS" "$M_IOS" "$(awk -v s="$M_SECT" 'BEGIN{printf "%.1f", s*512/1e6}')"
      a_ms+=("$M_MS") a_ios+=("$M_IOS")
    done
    rm -f "$WORK/$label.converted.img"
    bi_lo=$(printf '%s\n' "${b_ios[@]}" | sort -n | head -1)
    ai_hi=$(printf '%s\n' "${a_ios[@]}" | sort -n | tail -1)
    bm=$(median "${b_ms[@]}")
    am=$(median "${a_ms[@]}")
    echo
  fi

  summarize "convert --bg-tree" "$label" "$REF_LABEL"
  [ "$REVERSE" = 0 ] || summarize "convert --no-bg-tree" "$label" "$REF_LABEL"
  echo

  # Targets of issue 5, on the medians, against the measured reference only.
  # shellcheck disable=SC2086
  f_med=$(median ${R_WALL["convert --bg-tree|new"]:-})
  # shellcheck disable=SC2086
  rss_hi=$(stats ${R_RSS["convert --bg-tree|new"]:-} | cut -d' ' -f3)
  if [ "$have_tune" = 1 ]; then
    # shellcheck disable=SC2086
    r_med=$(median ${R_WALL["convert --bg-tree|ref"]:-})
    read -r sp t_speed < <(awk -v f="$f_med" -v r="$r_med" -v nbg="$nbg" 'BEGIN {
      if (f !~ /^[0-9.]+$/ || r !~ /^[0-9.]+$/ || f == 0) { print "n/a MISSED"; exit }
      s = r / f; ok = (s >= 4) && (nbg < 7003 || f < 1.0); printf "%.1f %s\n", s, ok ? "met" : "MISSED" }')
    speed_text="btrfstune median $r_med s / fsctl new median $f_med s = ${sp}x -> target >= 4x$([ "$nbg" -ge 7003 ] 2>/dev/null && echo ' and < 1 s'): $t_speed"
  else
    t_speed="not judged" speed_text="fsctl new median $f_med s; btrfstune not measured -> target >= 4x: not judged"
  fi
  # The I/O floor (issue 14): what fsctl wrote in run 1 and the leaves
  # holding block group items, read and written by dd now.
  bgleaves=$(image_info "$img" | awk '{ print $6 }')
  copies=$("$FSCTL" --format json inspect block-groups "$img" 2>/dev/null | python3 -c '
import json, sys
copies = {"dup": 2, "raid1": 2, "raid1c3": 3, "raid1c4": 4, "raid10": 2}
bgs = [b for b in json.load(sys.stdin)["block_groups"] if "METADATA" in b["flags_name"]]
print(max([copies.get(b["profile"], 1) for b in bgs] or [1]))' 2>/dev/null || echo 1)
  new_blocks=${BLOCKS_WRITTEN:-0}
  if [ "$new_blocks" -gt 0 ] 2>/dev/null && [ "$bgleaves" -gt 0 ] 2>/dev/null; then
    io_floor "$bgleaves" "$new_blocks" "$copies" "$nodesize"
    floor_text=$(awk -v f="$f_med" -v fl="$F_SECONDS" -v r="${r_med:-}" -v w="$F_WRITE" -v rd="$F_READ" -v wb="$F_WB" -v rb="$F_RB" 'BEGIN {
      s = sprintf("dd now: write %.0f MiB %.3f s + read %.0f MiB %.3f s = %.3f s; fsctl new median %s s = %.2fx the floor -> target <= 2x: %s",
                  wb / 1048576, w, rb / 1048576, rd, fl, f, f / fl, (f / fl <= 2) ? "met" : "MISSED")
      if (r ~ /^[0-9.]+$/) s = s sprintf("; btrfstune / floor = %.1fx (the most any tool could be faster than btrfstune here)", r / fl)
      print s }')
  else
    floor_text="not measured (blocks written or leaves unknown)"
  fi
  t_rss=$(awk -v r="$rss_hi" 'BEGIN { print (r != "-" && r < 320) ? "met" : "MISSED" }')
  echo "targets (issue 5), $label:"
  echo "  speed: $speed_text"
  echo "  fsctl new peak RSS ${rss_hi} MiB -> target < 320 MiB (256 MiB cache + 64): $t_rss"
  if [ "$have_tune" = 1 ]; then
    echo "targets (issue 14), $label: speed ${sp}x btrfstune -> target >= 8x: $(awk -v s="$sp" 'BEGIN { print (s + 0 >= 8) ? "met" : "MISSED" }')"
  else
    echo "targets (issue 14), $label: speed -> target >= 8x btrfstune: not judged (btrfstune not measured)"
  fi
  echo "  I/O floor ($bgleaves leaves holding block group items read, $new_blocks blocks x $copies copies written): $floor_text"
  if [ "$MOUNT_RUNS" -gt 0 ]; then
    read -r io_ratio t_io < <(awk -v b="$bi_lo" -v a="$ai_hi" 'BEGIN { r = (a > 0) ? b / a : 999; printf "%.1f %s\n", r, (r >= 40) ? "met" : "MISSED" }')
    echo "  mount read I/Os ${bi_lo} (fewest before) -> ${ai_hi} (most after): ${io_ratio}x fewer -> target >= 40x: $t_io"
    echo "  mount time median ${bm} ms -> ${am} ms ($(ratio "$bm" "$am")x)"
  else
    t_io=met
  fi
  [ "$t_speed" != MISSED ] && [ "$t_rss" = met ] && [ "$t_io" = met ] || ALL_MET=0
  echo
  reset_records  # the next image's figures start afresh
done
if [ "$ALL_OK" = 1 ]; then echo "runs: every conversion exited 0 and every result passed btrfs check"; else echo "runs: FAILED at least once (see above)"; fi
if [ "$ALL_MET" = 1 ]; then echo "targets: met (or not judged) on every image"; else echo "targets: MISSED on at least one image (see above)"; fi
bench_footer
