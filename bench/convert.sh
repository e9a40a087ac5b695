#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/convert.sh: `fsctl convert --bg-tree` against btrfs-progs'
# `btrfstune --convert-to-block-group-tree`, and the kernel's mount time and
# mount read I/Os before and after the conversion, in one run (issue 5).
#
# For each image and run, on fresh copies (cp --sparse=always), with the page
# cache dropped before every timed command (sync; echo 3 > drop_caches):
#   1. fsctl convert --bg-tree: wall time, CPU time (user + sys), the time
#      its main thread waited for a CPU (run-queue wait from
#      /proc/PID/schedstat: on a loaded machine wall minus that is about what
#      the run would take alone), peak RSS (/usr/bin/time -v), commits
#      (superblock generation delta), tree blocks written (fsctl's JSON);
#      then `btrfs check --readonly` and `fsctl inspect block-groups`.
#   2. btrfstune --convert-to-block-group-tree on its own copy, when the
#      btrfstune found has that option; otherwise the reference figure of
#      FORMAT.md section 5 is printed, labeled as such.
#   3. fsctl convert --no-bg-tree on the converted copy (timed), then the same
#      checks.
#   4. kernel `mount -o ro` of the unconverted and the converted image through
#      a read-only loop device: wall time of mount(8), and reads completed /
#      sectors read from /sys/block/loopN/stat just before and after mounting.
# The timed commands (conversions, btrfstune, mount) run under nice -n $NICE
# (default -10, as in bench/walk.sh; 0 = off): on a shared machine it keeps
# other jobs from stretching the short runs. The run-queue wait is still shown.
# Then side by side with ratios, and whether the targets of issue 5 are met:
#   fsctl >= 4x faster than btrfstune (and < 1 s for 7,003 block groups),
#   fsctl peak RSS < cache budget (256 MiB) + 64 MiB,
#   mount read I/Os after conversion >= 40x fewer than before.
#
# Needs root (drop_caches, loop devices, mount), btrfs-progs, GNU time, zstd,
# tar, python3 (to fill the 4K images).
#
# Usage: bench/convert.sh [--fsctl PATH] [--btrfstune PATH] [--runs N]
#                         [--mount-runs N] [--batch N] [--nice N] [--only NAME]
#                         [--build-only]
#   --fsctl PATH       fsctl binary (default: $FSCTL or build/fsctl); use a Release build
#   --btrfstune PATH   btrfstune binary (default: btrfstune on PATH)
#   --runs N           conversions per image (default 3), each on a fresh copy
#   --mount-runs N     mounts before and after (default 3)
#   --batch N          pass --batch N to fsctl (default: fsctl's own default)
#   --nice N           niceness of the timed commands (default $NICE or -10; 0 = off)
#   --only NAME        measure only this image: bg-8T-16k, bg-8T-4k, or bg-2T-4k
#                      (the last is not in the default run)
#   --build-only       make the cached images and exit
# Images (cached under $FSCTL_BENCH_DIR/convert, default
# /var/tmp/fsctl-bench/convert, never inside the repository):
#   bg-8T-16k  ../shared/bench-images/bg-8T-16k.tar.zst restored (8 TiB sparse,
#              nodesize 16K, 7,003 block groups, BG items in 7,001 leaves)
#   bg-8T-4k   made here the way bg-8T-16k was made, at nodesize 4K:
#              mkfs.btrfs (nodesize 4K, metadata DUP, data single, free space
#              tree, no-holes, no block-group-tree) on an 8 TiB sparse file;
#              through a loop mount, subvolumes sv0..sv3 and 7,000 files of
#              1 GiB (f00000.., file i in sv(i % 4)), each fallocated in 4 MiB
#              pieces (one posix_fallocate per piece: 256 same-size-class
#              extents per 1 GiB data block group, so each block group item
#              ends up in its own extent-tree leaf; FORMAT.md section 5); then
#              snapshot snap0 of sv0, quota enable (and its rescan), level-1
#              qgroup 1/100 with members 0/256 and 0/257, rescan -w. About
#              7,003 block groups. Fill and quota times go to
#              $FSCTL_BENCH_DIR/convert/build.log.
#   bg-2T-4k   (only with --only bg-2T-4k) the earlier, smaller 4K image: 2 TiB
#              sparse, 1,600 GiB fallocated the same way into 100 GiB files in
#              the top-level subvolume, no quota; 1,603 block groups
# Working copies go to $FSCTL_BENCH_DIR/convert/work and are removed at exit.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
CACHE=$BENCH_DIR/convert
BTRFSTUNE=$(command -v btrfstune || true)
RUNS=3
MOUNT_RUNS=3
BATCH=
ONLY=
BUILD_ONLY=0
NICE=${NICE:--10}

while [ $# -gt 0 ]; do
  case $1 in
    --fsctl) FSCTL=$2; shift 2 ;;
    --btrfstune) BTRFSTUNE=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --mount-runs) MOUNT_RUNS=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --nice) NICE=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
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
if [ -z "$ONLY" ] || [ "$ONLY" = bg-8T-16k ]; then IMGS+=("$(restore_bg8t "$CACHE/bg-8T-16k")"); fi
if [ -z "$ONLY" ] || [ "$ONLY" = bg-8T-4k ]; then IMGS+=("$(make_bg4k bg-8T-4k 8T 7000 subvols)"); fi
if [ "$ONLY" = bg-2T-4k ]; then IMGS+=("$(make_bg4k bg-2T-4k 2T 1600 flat)"); fi
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

have_tune=0
if [ -n "$BTRFSTUNE" ] && grep -q -- --convert-to-block-group-tree < <("$BTRFSTUNE" --help 2>&1); then have_tune=1; fi

bench_header "${BATCH:+, --batch $BATCH}; timed commands and mounts under nice -n $NICE"
if [ "$have_tune" = 1 ]; then
  echo "# btrfstune: $BTRFSTUNE (has --convert-to-block-group-tree)"
else
  echo "# btrfstune: ${BTRFSTUNE:-none} has no --convert-to-block-group-tree: reference figures from FORMAT.md section 5 are printed instead"
fi
echo "# caches dropped before each timed command; conversions on fresh sparse copies; mounts ro through a read-only loop device"
echo

ALL_MET=1
for img in "${IMGS[@]}"; do
  label=$(label_of "$img")
  nodesize=$("$BTRFS" inspect-internal dump-super "$img" 2>/dev/null | awk '$1 == "nodesize" {print $2}')
  nbg=$("$FSCTL" --format json inspect block-groups "$img" 2>/dev/null |
    python3 -c 'import json, sys; print(len(json.load(sys.stdin)["block_groups"]))' 2>/dev/null || echo "?")
  echo "== $label: $img ($(du -h "$img" | cut -f1) allocated), nodesize $nodesize, $nbg block groups"
  echo "   $(image_info "$img")"
  echo "   load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  # Reference figures (FORMAT.md section 5, btrfs-progs 6.19 on this kind of VM).
  ref_lo= ref_hi= ref_rss= ref_commits= ref_note=
  case $label in
    bg-8T-16k) ref_lo=3.57 ref_hi=4.23 ref_rss=146 ref_commits=439 ref_note="FORMAT.md section 5, this image" ;;
    bg-8T-4k) ref_lo=3.57 ref_hi=4.23 ref_rss=146 ref_commits=439
       ref_note="FORMAT.md section 5, closest case: bg-8T-16k, the same size and 7,003 BGs at nodesize 16K (no 4K figure exists)" ;;
    *) ref_lo=0.73 ref_hi=0.81 ref_rss=30 ref_commits=103
       ref_note="FORMAT.md section 5, closest case: 2 TiB with 1,603 BGs at nodesize 16K (no 4K figure exists); commits = 1,603/16 + 2" ;;
  esac
  echo

  fmt='%-24s %3s | %9s %6s %7s %9s %7s %7s %15s | %-5s | %s\n'
  printf "$fmt" "conversion" run "wall s" "cpu s" "runq s" "RSS MiB" commits "blocks" "resv/used MB" check "block groups after (fsctl inspect)"
  f_walls=() f_rsss=() r_walls=() f_alone=()
  for run in $(seq 1 "$RUNS"); do
    copy=$WORK/$label.run$run.img
    fresh_copy "$img" "$copy"
    g0=$(gen_of "$copy")
    timed "$WORK/fsctl.json" nice -n "$NICE" "$FSCTL" --format json convert --bg-tree ${BATCH:+--batch "$BATCH"} "$copy"
    f_wall=$T_WALL f_rss=$T_RSS f_rc=$T_RC f_cpu=$T_CPU f_runq=$T_RUNQ
    g1=$(gen_of "$copy")
    blocks=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["tree_blocks_written"], d["commits"])' "$WORK/fsctl.json" 2>/dev/null || echo "? ?")
    resv=$(resv_used "$WORK/fsctl.json")
    ck=$(check_img "$copy")
    [ "$ck" = ok ] || { ALL_MET=0; sed 's/^/    check: /' "$WORK/check.out" | head -20; }
    [ "$f_rc" = 0 ] || { ALL_MET=0; echo "    fsctl exit $f_rc:"; sed 's/^/    /' "$WORK/fsctl.json" | head -20; }
    printf "$fmt" "fsctl --bg-tree" "$run" "$f_wall" "$f_cpu" "$f_runq" "$f_rss" "$((g1 - g0))" "${blocks%% *}" "$resv" "$ck" "$(bg_where "$copy")"
    f_walls+=("$f_wall") f_rsss+=("$f_rss") f_alone+=("$(awk -v w="$f_wall" -v q="$f_runq" 'BEGIN { printf "%.3f", w - q }')")
    if [ "$run" = 1 ]; then
      # The converted copy of run 1 is kept for the mounts after conversion.
      mv "$copy" "$WORK/$label.converted.img"
      copy=$WORK/$label.converted.img
      # --no-bg-tree on a second copy of it (timed), so the mounts see the
      # converted state.
      fresh_copy "$copy" "$WORK/$label.back.img"
      g0=$(gen_of "$WORK/$label.back.img")
      timed "$WORK/back.json" nice -n "$NICE" "$FSCTL" --format json convert --no-bg-tree ${BATCH:+--batch "$BATCH"} "$WORK/$label.back.img"
      b_wall=$T_WALL b_rss=$T_RSS b_rc=$T_RC b_cpu=$T_CPU b_runq=$T_RUNQ
      g1=$(gen_of "$WORK/$label.back.img")
      bblocks=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["tree_blocks_written"])' "$WORK/back.json" 2>/dev/null || echo "?")
      bck=$(check_img "$WORK/$label.back.img")
      [ "$bck" = ok ] || { ALL_MET=0; sed 's/^/    check: /' "$WORK/check.out" | head -20; }
      [ "$b_rc" = 0 ] || { ALL_MET=0; echo "    fsctl exit $b_rc:"; sed 's/^/    /' "$WORK/back.json" | head -20; }
      back_line=$(printf "$fmt" "fsctl --no-bg-tree" 1 "$b_wall" "$b_cpu" "$b_runq" "$b_rss" "$((g1 - g0))" "$bblocks" "$(resv_used "$WORK/back.json")" "$bck" "$(bg_where "$WORK/$label.back.img")")
      rm -f "$WORK/$label.back.img"
    else
      rm -f "$copy"
    fi
    if [ "$have_tune" = 1 ]; then
      copy=$WORK/$label.tune.img
      fresh_copy "$img" "$copy"
      g0=$(gen_of "$copy")
      timed "$WORK/tune.out" nice -n "$NICE" "$BTRFSTUNE" --convert-to-block-group-tree "$copy"
      g1=$(gen_of "$copy")
      tck=$(check_img "$copy")
      printf "$fmt" "btrfstune" "$run" "$T_WALL" "$T_CPU" "$T_RUNQ" "$T_RSS" "$((g1 - g0))" "-" "-" "$tck" "$(bg_where "$copy")"
      [ "$T_RC" = 0 ] || sed 's/^/    btrfstune: /' "$WORK/tune.out" | head -5
      r_walls+=("$T_WALL")
      ref_rss=$T_RSS
      rm -f "$copy"
    fi
  done
  printf '%s\n' "$back_line"
  if [ "$have_tune" = 1 ]; then
    ref_lo=$(printf '%s\n' "${r_walls[@]}" | sort -g | head -1)
    ref_hi=$(printf '%s\n' "${r_walls[@]}" | sort -g | tail -1)
    ref_note="measured above"
  else
    printf "$fmt" "btrfstune (reference)" "-" "$ref_lo-$ref_hi" "-" "-" "$ref_rss" "$ref_commits" "-" "-" "-" "$ref_note"
  fi
  f_lo=$(printf '%s\n' "${f_walls[@]}" | sort -g | head -1)
  f_hi=$(printf '%s\n' "${f_walls[@]}" | sort -g | tail -1)
  rss_hi=$(printf '%s\n' "${f_rsss[@]}" | sort -g | tail -1)
  echo

  # Mounts: the unconverted image (read-only loop on the cached image itself)
  # and the converted copy of run 1.
  mfmt='%-24s %3s | %9s %10s %9s\n'
  printf "$mfmt" "mount -o ro" run "ms" "read I/Os" "MB read"
  b_ms=() b_ios=() a_ms=() a_ios=()
  for run in $(seq 1 "$MOUNT_RUNS"); do
    mount_measure "$img"
    printf "$mfmt" "before conversion" "$run" "$M_MS" "$M_IOS" "$(awk -v s="$M_SECT" 'BEGIN{printf "%.1f", s*512/1e6}')"
    b_ms+=("$M_MS") b_ios+=("$M_IOS")
  done
  for run in $(seq 1 "$MOUNT_RUNS"); do
    mount_measure "$WORK/$label.converted.img"
    printf "$mfmt" "after (fsctl --bg-tree)" "$run" "$M_MS" "$M_IOS" "$(awk -v s="$M_SECT" 'BEGIN{printf "%.1f", s*512/1e6}')"
    a_ms+=("$M_MS") a_ios+=("$M_IOS")
  done
  rm -f "$WORK/$label.converted.img"
  bi_lo=$(printf '%s\n' "${b_ios[@]}" | sort -n | head -1)
  ai_hi=$(printf '%s\n' "${a_ios[@]}" | sort -n | tail -1)
  bm=$(printf '%s\n' "${b_ms[@]}" | sort -n | sed -n "$(( (MOUNT_RUNS + 1) / 2 ))p")
  am=$(printf '%s\n' "${a_ms[@]}" | sort -n | sed -n "$(( (MOUNT_RUNS + 1) / 2 ))p")
  echo

  # Targets.
  read -r sp_lo sp_hi t_speed < <(awk -v flo="$f_lo" -v fhi="$f_hi" -v rlo="$ref_lo" -v rhi="$ref_hi" -v nbg="$nbg" 'BEGIN {
    lo = rlo / fhi; hi = rhi / flo; ok = (lo >= 4) && (nbg < 7003 || fhi < 1.0);
    printf "%.1f %.1f %s\n", lo, hi, ok ? "met" : "MISSED" }')
  t_rss=$(awk -v r="$rss_hi" 'BEGIN { print (r < 320) ? "met" : "MISSED" }')
  read -r io_ratio t_io < <(awk -v b="$bi_lo" -v a="$ai_hi" 'BEGIN { r = (a > 0) ? b / a : 999; printf "%.1f %s\n", r, (r >= 40) ? "met" : "MISSED" }')
  echo "summary $label:"
  echo "  fsctl --bg-tree ${f_lo}-${f_hi} s vs btrfstune ${ref_lo}-${ref_hi} s ($ref_note): ${sp_lo}x-${sp_hi}x faster (worst pairing first) -> target >= 4x$([ "$nbg" -ge 7003 ] 2>/dev/null && echo ' and < 1 s'): $t_speed"
  echo "  fsctl --bg-tree wall minus run-queue wait (time not spent waiting for a CPU): $(printf '%s\n' "${f_alone[@]}" | sort -g | head -1)-$(printf '%s\n' "${f_alone[@]}" | sort -g | tail -1) s"
  echo "  fsctl peak RSS ${rss_hi} MiB (btrfstune $ref_rss MB) -> target < 320 MiB (256 MiB cache + 64): $t_rss"
  echo "  mount read I/Os ${bi_lo} (fewest before) -> ${ai_hi} (most after): ${io_ratio}x fewer -> target >= 40x: $t_io"
  echo "  mount time median ${bm} ms -> ${am} ms ($(awk -v b="$bm" -v a="$am" 'BEGIN { printf "%.1fx", (a > 0) ? b / a : 0 }'))"
  [ "$t_speed" = met ] && [ "$t_rss" = met ] && [ "$t_io" = met ] || ALL_MET=0
  echo
done
if [ "$ALL_MET" = 1 ]; then echo "targets: met on every image"; else echo "targets: MISSED on at least one image (see the summaries)"; fi
