#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/balance.sh: `fsctl balance -m` against the kernel's `btrfs balance
# start -m` on the balance-16snap-4k image (nodesize 4K, ~110,000 small files,
# 16 snapshots with 3 files changed each, quota on), optionally against an
# older fsctl too, in one run (issues 6, 11, 14).
#
# Tools, alternated run by run (bench/lib.sh order_for: in run 1 old, new,
# kernel; in run 2 new, kernel, old; ...), each on a fresh copy
# (cp --sparse=always) of the same cached image, every timed command under
# nice -n $NICE (default -10; 0 = off; for the kernel this is the btrfs
# process, which does the relocation in its ioctl, not the kernel's workers):
#   ref (kernel): the copy on a loop device, mounted; page cache dropped;
#      `btrfs balance start -m MNT` timed (wall, CPU of the btrfs process
#      including the kernel work done in its context, its run-queue wait),
#      then `btrfs filesystem sync MNT` (timed apart, added to the total).
#      Meanwhile, where tracefs exists (/sys/kernel/tracing or
#      /sys/kernel/debug/tracing; it is mounted at /sys/kernel/tracing for the
#      run when the kernel has it but nothing mounted it), a trace instance of
#      its own sums the btrfs:btrfs_qgroup_num_dirty_extents events of this
#      filesystem (fsid) and counts btrfs:btrfs_qgroup_account_extent.
#      Relocated block groups and extents come from the kernel log
#      ("relocating block group", "found N extents") of this loop device after
#      a marker written to /dev/kmsg. Qgroup status of the mounted fs: whether
#      `btrfs qgroup show` warns "inconsistent". Unmount; commits = superblock
#      generation delta. Note: `btrfs balance start -m` relocates the system
#      chunks too (the kernel logs "balance: start -m -s"); fsctl's -m selects
#      metadata block groups only, so its block group count is one lower on
#      this image.
#   new, old (fsctl: --fsctl, --fsctl-old): `fsctl --format json balance -m
#      COPY` timed (wall, CPU, run-queue wait, peak RSS from /usr/bin/time -v);
#      its JSON report's fields (block groups relocated, relocated extents,
#      tree blocks copied, qgroup dirty extents, commits, reserved/used bytes,
#      seconds) and the generation delta; then a read-only kernel mount of the
#      result (mounts? qgroup status?). When an fsctl has no balance command,
#      the script says "not available" for it.
#   After each: `btrfs check --readonly`, `btrfs check --readonly
#   --qgroup-report` (no "are different"), `fsctl qgroup verify` (exit 0), and
#   every qgroup's on-disk numbers (`fsctl qgroup show`) against the image's
#   before ("numbers unchanged", the issue's promise), plus the metadata block
#   groups left (`fsctl inspect block-groups`).
# Then a side-by-side table (min-max over the runs): seconds, relocated
# extents, qgroup dirty extents, commits, qgroups consistent (check
# --qgroup-report, fsctl qgroup verify, numbers unchanged), peak RSS; and
# min/median/max per tool with the median ratios new/kernel and new/old and a
# "row:" line for bench/RESULTS.md (bench/lib.sh summarize).
#
# Needs root (drop_caches, loop devices, mount, tracefs, /dev/kmsg),
# btrfs-progs, GNU time, python3; ~2 GB free under $FSCTL_BENCH_DIR.
#
# Usage: bench/balance.sh [--fsctl PATH] [--fsctl-old PATH] [--btrfs PATH]
#                         [--runs N] [--nice N] [--no-kernel] [--no-fsctl]
#                         [--build-only] [--keep] [IMG]
#   --fsctl PATH      fsctl binary (default: $FSCTL or build/fsctl); use a Release
#                     build (bench/build-fsctl.sh REV makes one of any commit)
#   --fsctl-old PATH  an older fsctl run side by side (default: none)
#   --btrfs PATH      btrfs for balance start and the checks (default: btrfs on PATH)
#   --progs DIR       accepted for symmetry with the other scripts; unused here
#                     (the reference is the running kernel)
#   --runs N          balances per tool (default 3), each on a fresh copy
#   --nice N          niceness of the timed commands (default $NICE or -10; 0 = off)
#   --no-kernel       leave out the kernel (the reference is then "not measured")
#   --no-fsctl        leave out both fsctl
#   --build-only      make (or find) the cached image, print what it holds, exit
#   --keep            keep the working directory (copies after balance, outputs)
#   IMG               another image instead of balance-16snap-4k
# Image: make_snap_image (bench/lib.sh): $FSCTL_BENCH_DIR/balance-16snap-4k.img
# (default /var/tmp/fsctl-bench, shared with bench/walk.sh and bench/qgroup.sh)
# when its build is logged in build.log, else the one bench/qgroup.sh made,
# else built once with ../shared/bench-images/make-balance-16snap-4k.sh (a few
# minutes). What it holds is cached next to it (IMG.balance-info). The shared
# balance-16snap-4k.json describes one particular build (its fsid); the
# script says whether the image is that build, and prints that build's kernel
# figures only as a note about that other build when it is not (they are
# never used in a ratio).
# Working copies go to $FSCTL_BENCH_DIR/balance/work and are removed at exit.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
CACHE=$BENCH_DIR/balance
RUNS=3
DO_KERNEL=1
DO_FSCTL=1
BUILD_ONLY=0
KEEP=0
IMG=

while [ $# -gt 0 ]; do
  case $1 in
    --fsctl) FSCTL=$2; shift 2 ;;
    --fsctl-old) FSCTL_OLD=$2; shift 2 ;;
    --progs) PROGS=$2; shift 2 ;;
    --btrfs) BTRFS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --nice) NICE=$2; shift 2 ;;
    --no-kernel) DO_KERNEL=0; shift ;;
    --no-fsctl) DO_FSCTL=0; shift ;;
    --build-only) BUILD_ONLY=1; shift ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) IMG=$1; shift ;;
  esac
done

bench_preflight
JSON_REF=$IMAGES_SRC/balance-16snap-4k.json

# --- image ------------------------------------------------------------------
mkdir -p "$CACHE"
[ -n "$IMG" ] || IMG=$(make_snap_image balance-16snap-4k 16)
[ -s "$IMG" ] || die "no image $IMG"
IMG=$(readlink -f "$IMG")

# image_info IMG: cached facts (IMG.balance-info, JSON): label, fsid,
# generation, nodesize, block groups, METADATA_ITEMs per metadata/system block
# group (btrfs inspect-internal dump-tree -t extent), qgroups and fsctl qgroup
# verify's verdict.
image_info() {
  local img=$1 info=$1.balance-info
  if [ ! -s "$info" ] || [ "$info" -ot "$img" ]; then
    "$BTRFS" inspect-internal dump-super "$img" > "$info.super" 2>/dev/null
    "$FSCTL" --format json inspect block-groups "$img" > "$info.bg.json"
    "$FSCTL" --format json qgroup show "$img" > "$info.qg.json"
    set +e
    "$FSCTL" qgroup verify "$img" > "$info.verify" 2>&1
    echo "rc $?" >> "$info.verify"
    set -e
    "$BTRFS" inspect-internal dump-tree -t extent "$img" 2>/dev/null |
      awk '/^\titem [0-9]+ key \([0-9]+ METADATA_ITEM / { sub(/^\(/, "", $4); print $4 }' > "$info.mi"
    python3 - "$info" > "$info.tmp" <<'PY'
import json, re, sys, bisect
base = sys.argv[1]
sup = {}
for line in open(base + ".super"):
    f = line.split(None, 1)
    if len(f) == 2:
        sup.setdefault(f[0], f[1].strip())
bgs = json.load(open(base + ".bg.json"))["block_groups"]
qg = json.load(open(base + ".qg.json"))
verify = open(base + ".verify").read()
starts = sorted((g["start"], g) for g in bgs)
keys = [s for s, _ in starts]
per_bg = {}
for line in open(base + ".mi"):
    b = int(line)
    i = bisect.bisect_right(keys, b) - 1
    if i >= 0 and b < starts[i][1]["start"] + starts[i][1]["length"]:
        per_bg[starts[i][0]] = per_bg.get(starts[i][0], 0) + 1
m = re.search(r"verified .*? (\d+) mismatched", verify)
print(json.dumps({
    "label": sup.get("label", ""), "fsid": sup.get("fsid"), "generation": int(sup.get("generation", 0)),
    "nodesize": int(sup.get("nodesize", 0)),
    "block_groups": [{"start": g["start"], "length": g["length"], "used": g["used"], "flags": g["flags_name"],
                      "metadata_items": per_bg.get(g["start"], 0)} for _, g in starts],
    "qgroups": len(qg.get("qgroups", [])),
    "qgroup_inconsistent": (qg.get("status") or {}).get("inconsistent"),
    "verify_rc": int(verify.rsplit("rc ", 1)[1]),
    "verify_mismatched": int(m.group(1)) if m else None,
}))
PY
    mv "$info.tmp" "$info"
    rm -f "$info.super" "$info.bg.json" "$info.qg.json" "$info.verify" "$info.mi"
  fi
  python3 - "$info" "$img" "$JSON_REF" <<'PY'
import json, os, sys
i = json.load(open(sys.argv[1]))
img, ref_path = sys.argv[2], sys.argv[3]
by = {}
for g in i["block_groups"]:
    by.setdefault(g["flags"], []).append(g)
print("image: %s, label %s, fsid %s, generation %d, nodesize %d" % (img, i["label"], i["fsid"], i["generation"], i["nodesize"]))
print("  block groups: " + ", ".join("%d %s (used %.1f of %.1f MiB)" % (
    len(v), k, sum(g["used"] for g in v) / 2**20, sum(g["length"] for g in v) / 2**20) for k, v in sorted(by.items())))
sel = [g for g in i["block_groups"] if g["flags"].split("|")[0] in ("METADATA", "SYSTEM")]
print("  tree blocks (METADATA_ITEMs) in the metadata/system block groups: " + ", ".join(
    "%d in %s @%d" % (g["metadata_items"], g["flags"], g["start"]) for g in sel))
print("  qgroups: %d, on-disk flag %s, fsctl qgroup verify exit %d (%s mismatched)" % (
    i["qgroups"], "INCONSISTENT" if i["qgroup_inconsistent"] else "consistent", i["verify_rc"], i["verify_mismatched"]))
try:
    ref = json.load(open(ref_path))
except Exception:
    print("  (no %s)" % ref_path); sys.exit()
r = ref["kernel_balance_reference"]
found = sum(x["found_extents"] for x in r["relocated_block_groups"])
summary = "kernel %s: relocated %d extents in %d block groups, %s-%s s wall, %d qgroup dirty extents" % (
    r["kernel"], found, len(r["relocated_block_groups"]), min(r["wall_s"]), max(r["wall_s"]), r["qgroup_dirty_extents_sum"])
if ref["superblock"]["fsid"] == i["fsid"]:
    print("  this is the build %s describes (same fsid); its reference: %s" % (os.path.basename(ref_path), summary))
else:
    diffs = []
    if ref["mkfs"]["nodesize"] != i["nodesize"]:
        diffs.append("nodesize %d" % ref["mkfs"]["nodesize"])
    if len(ref["subvolumes"]) + 1 != i["qgroups"]:
        diffs.append("%d qgroups" % (len(ref["subvolumes"]) + 1))
    counts = {}
    for g in i["block_groups"]:
        t = g["flags"].split("|")[0]
        counts[t] = counts.get(t, 0) + 1
    if counts != ref["block_group_counts"]:
        diffs.append("block groups %s" % ref["block_group_counts"])
    print("  %s describes another build of this recipe (label %s, fsid %s, %d METADATA_ITEMs)%s;"
          % (os.path.basename(ref_path), ref["superblock"]["label"], ref["superblock"]["fsid"],
             ref["extent_tree"]["METADATA_ITEM"],
             ", which differs in " + ", ".join(diffs) if diffs else ", same shape"))
    print("  its figures were measured elsewhere and are not compared with this run: %s" % summary)
PY
}

image_info "$IMG"
if [ "$BUILD_ONLY" = 1 ]; then exit 0; fi
INFO=$IMG.balance-info

# --- measurement ------------------------------------------------------------
mkdir -p "$CACHE/work"
WORK=$(mktemp -d "$CACHE/work/run.XXXXXX")
MNT=$WORK/mnt
mkdir -p "$MNT"
LOOP=
TRACEFS='' TRACE_MOUNTED=0 TRACE_INST=''
cleanup() {
  if mountpoint -q "$MNT" 2>/dev/null; then umount "$MNT" || true; fi
  if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
  if [ -n "$TRACE_INST" ] && [ -d "$TRACE_INST" ]; then
    echo 0 > "$TRACE_INST/tracing_on" 2>/dev/null || true
    echo 0 > "$TRACE_INST/events/enable" 2>/dev/null || true
    rmdir "$TRACE_INST" 2>/dev/null || true
  fi
  if [ "$TRACE_MOUNTED" = 1 ]; then umount /sys/kernel/tracing 2>/dev/null || true; fi
  if [ "$KEEP" = 1 ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# Tracing: a trace instance of our own (its own buffer and event switches).
trace_setup() {
  local d
  for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
    if [ -d "$d/events/btrfs/btrfs_qgroup_num_dirty_extents" ]; then TRACEFS=$d; break; fi
  done
  if [ -z "$TRACEFS" ] && [ -d /sys/kernel/tracing ] && grep -qw tracefs /proc/filesystems &&
     ! mountpoint -q /sys/kernel/tracing && mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
    TRACE_MOUNTED=1
    [ -d /sys/kernel/tracing/events/btrfs/btrfs_qgroup_num_dirty_extents ] && TRACEFS=/sys/kernel/tracing
  fi
  [ -n "$TRACEFS" ] || return 0
  TRACE_INST=$TRACEFS/instances/fsctl-bench-balance-$$
  mkdir "$TRACE_INST" 2>/dev/null || { TRACE_INST=; TRACEFS=; return 0; }
  echo 16384 > "$TRACE_INST/buffer_size_kb"
}
trace_start() {
  [ -n "$TRACE_INST" ] || return 0
  echo 0 > "$TRACE_INST/tracing_on"
  : > "$TRACE_INST/trace"
  echo 1 > "$TRACE_INST/events/btrfs/btrfs_qgroup_num_dirty_extents/enable"
  echo 1 > "$TRACE_INST/events/btrfs/btrfs_qgroup_account_extent/enable" 2>/dev/null || true
  echo 1 > "$TRACE_INST/tracing_on"
}
# trace_stop FSID OUT: sets TR_DIRTY (sum of num_dirty_extents), TR_ACCOUNT
# (btrfs_qgroup_account_extent events), TR_COMMITS (dirty-extent events), or "n/a".
trace_stop() {
  TR_DIRTY=n/a TR_ACCOUNT=n/a TR_COMMITS=n/a
  [ -n "$TRACE_INST" ] || return 0
  echo 0 > "$TRACE_INST/tracing_on"
  cat "$TRACE_INST/trace" > "$2"
  echo 0 > "$TRACE_INST/events/btrfs/btrfs_qgroup_num_dirty_extents/enable"
  echo 0 > "$TRACE_INST/events/btrfs/btrfs_qgroup_account_extent/enable" 2>/dev/null || true
  read -r TR_DIRTY TR_ACCOUNT TR_COMMITS < <(awk -v fsid="$1" '
    index($0, fsid) && /btrfs_qgroup_num_dirty_extents:/ { n++; if (match($0, /num_dirty_extents=[0-9]+/)) d += substr($0, RSTART + 18, RLENGTH - 18) }
    index($0, fsid) && /btrfs_qgroup_account_extent:/ { a++ }
    END { printf "%d %d %d\n", d, a, n }' "$2")
  if grep -q 'LOST.*EVENTS' "$2"; then TR_DIRTY="$TR_DIRTY(events lost)"; fi
}

# qg_same BEFORE_JSON AFTER_JSON: "yes" or "NO (first difference)" over every
# qgroup's on-disk numbers, limits and relations (fsctl qgroup show).
qg_same() {
  python3 - "$1" "$2" <<'PY'
import json, sys
def load(p):
    j = json.load(open(p))
    return {q["qgroupid"]: {k: q.get(k) for k in ("referenced", "exclusive", "referenced_compressed",
            "exclusive_compressed", "max_referenced", "max_exclusive", "parents", "children")}
            for q in j.get("qgroups", [])}, (j.get("status") or {}).get("inconsistent")
try:
    a, ai = load(sys.argv[1]); b, bi = load(sys.argv[2])
except Exception as e:
    print("NO (unreadable: %s)" % e); sys.exit()
for q in sorted(set(a) | set(b)):
    if q not in b: print("NO (%s gone)" % q); sys.exit()
    if q not in a: print("NO (%s new)" % q); sys.exit()
    for k in a[q]:
        if a[q][k] != b[q][k]:
            print("NO (%s %s %s -> %s)" % (q, k, a[q][k], b[q][k])); sys.exit()
if bi and not ai:
    print("NO (inconsistent flag set)"); sys.exit()
print("yes (%d qgroups)" % len(a))
PY
}

# checks_after IMG TAG: sets C_CHECK, C_QREPORT, C_VERIFY, C_SAME, C_META
# (metadata/system block groups now).
checks_after() {
  local img=$1 tag=$2 rc n
  set +e
  "$BTRFS" check --readonly "$img" > "$WORK/$tag.check" 2>&1; rc=$?
  set -e
  if [ $rc = 0 ]; then C_CHECK=ok; else C_CHECK="FAILED(rc $rc)"; fi
  set +e
  "$BTRFS" check --readonly --qgroup-report "$img" > "$WORK/$tag.qreport" 2>&1; rc=$?
  set -e
  n=$(grep -c 'are different' "$WORK/$tag.qreport" || true)
  if [ $rc = 0 ] && [ "$n" = 0 ]; then C_QREPORT=ok; else C_QREPORT="FAILED(rc $rc, $n different)"; fi
  set +e
  "$FSCTL" qgroup verify "$img" > "$WORK/$tag.verify" 2>&1; rc=$?
  set -e
  if [ $rc = 0 ]; then C_VERIFY=ok; else C_VERIFY="FAILED(rc $rc)"; fi
  "$FSCTL" --format json qgroup show "$img" > "$WORK/$tag.qg.json" 2>/dev/null || true
  C_SAME=$(qg_same "$WORK/before.qg.json" "$WORK/$tag.qg.json")
  C_META=$("$FSCTL" --format json inspect block-groups "$img" 2>/dev/null | python3 -c '
import json, sys
g = [x for x in json.load(sys.stdin)["block_groups"] if x["flags_name"].split("|")[0] in ("METADATA", "SYSTEM")]
print(", ".join("%s @%d used %.1f MiB" % (x["flags_name"], x["start"], x["used"] / 2**20) for x in g))' 2>/dev/null || echo "?")
  for f in check qreport verify; do
    case $f in check) v=$C_CHECK ;; qreport) v=$C_QREPORT ;; verify) v=$C_VERIFY ;; esac
    [ "$v" = ok ] || sed "s/^/    $f: /" "$WORK/$tag.$f" | head -15
  done
}

# fsctl_fields REPORT_JSON: "bgs extents blocks dirty commits reserved used seconds
# qgroups-consistent"
# from fsctl's JSON report ("?" where a field is missing), then the line
# "fields: k=v ..." with every scalar field (dicts flattened, lists by length).
fsctl_fields() {
  python3 - "$1" <<'PY'
import json, re, sys
text = open(sys.argv[1], errors="replace").read()
try:
    j = json.loads(text)
except Exception:
    try:
        j = json.JSONDecoder().raw_decode(text[text.index("{"):])[0]
    except Exception:
        print("? ? ? ? ? ? ? ? ?"); print("fields: (no JSON report)"); sys.exit()
flat = {}
def walk(o, p):
    if isinstance(o, dict):
        for k, v in o.items():
            walk(v, p + [k])
    elif isinstance(o, list):
        flat[".".join(p)] = len(o)
    else:
        flat[".".join(p)] = o
walk(j, [])
def pick(*names):
    for n in names:
        for k, v in flat.items():
            if k.split(".")[-1] == n and not k.startswith("__header"):
                return v
    return "?"
print(" ".join(str(x).replace(" ", "_") for x in (
    pick("block_groups_relocated", "relocated_block_groups", "block_groups"),
    pick("relocated_extents", "extents_relocated", "extents"),
    pick("tree_blocks_copied", "blocks_copied", "copied_tree_blocks", "tree_blocks_written"),
    pick("qgroup_dirty_extents", "dirty_extents", "qgroup_traced_extents", "traced_extents"),
    pick("commits"),
    pick("reserved_bytes", "bytes_reserved", "reserved"),
    pick("used_bytes", "bytes_used", "used"),
    pick("seconds", "elapsed_seconds", "elapsed", "duration_seconds"),
    pick("consistent"))))
print("fields: " + " ".join("%s=%s" % (k, v) for k, v in flat.items() if not k.startswith("__header")))
PY
}

fsid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fsid"])' "$INFO")
"$FSCTL" --format json qgroup show "$IMG" > "$WORK/before.qg.json"
sel_items=$(python3 -c '
import json, sys
print(sum(g["metadata_items"] for g in json.load(open(sys.argv[1]))["block_groups"] if g["flags"].split("|")[0] in ("METADATA", "SYSTEM")))' "$INFO")

# have_balance BIN: 1 when this fsctl has a balance command
have_balance() {
  if grep -qE '^[[:space:]]+balance([[:space:]]|$)' < <("$1" --help 2>&1); then echo 1; else echo 0; fi
}
declare -A HAVE_BAL=([new]=0 [old]=0)
HAVE_BAL[new]=$(have_balance "$FSCTL")
[ -z "$FSCTL_OLD" ] || HAVE_BAL[old]=$(have_balance "$FSCTL_OLD")
if [ "$DO_FSCTL" = 0 ]; then FSCTL_OLD=; fi
set_tools "$DO_KERNEL"
if [ "$DO_FSCTL" = 0 ]; then TOOLS=(); [ "$DO_KERNEL" = 0 ] || TOOLS=(ref); fi
[ ${#TOOLS[@]} -gt 0 ] || die "--no-kernel and --no-fsctl: nothing to measure"
REF_LABEL="kernel $(uname -r)"

echo
if [ "$DO_KERNEL" = 1 ]; then
  ref_line="reference: the kernel ($(uname -r)): $BTRFS balance start -m MNT, then btrfs filesystem sync MNT (both in the time)"
else
  ref_line="reference: not measured (--no-kernel)"
fi
bench_header "$ref_line" "fsctl: --format json balance -m COPY" "each balance on a fresh sparse copy of $IMG"
for t in new old; do
  [ "$t" = new ] || [ -n "$FSCTL_OLD" ] || continue
  [ "${HAVE_BAL[$t]}" = 1 ] || echo "# fsctl $t balance: not available ($(fsctl_of "$t") has no balance command)"
done
echo

[ "$DO_KERNEL" = 0 ] || trace_setup
if [ "$DO_KERNEL" = 0 ]; then
  :
elif [ -n "$TRACEFS" ]; then
  echo "# tracing: $TRACEFS$([ "$TRACE_MOUNTED" = 1 ] && echo ' (mounted by this script)'), instance $(basename "$TRACE_INST"): btrfs_qgroup_num_dirty_extents, btrfs_qgroup_account_extent of fsid $fsid"
else
  echo "# tracing: no tracefs with btrfs events: qgroup dirty extents of the kernel run are n/a"
fi
echo "# selected by -m: $sel_items tree blocks (METADATA_ITEMs) in the metadata and system block groups"
echo

# Per tool (ref, old, new): space-separated figures of the runs
declare -A P_WALL P_ALONE P_CPU P_BGS P_EXT P_BLOCKS P_DIRTY P_COMMITS P_QR P_VER P_SAME P_RSS

rfmt='%-7s %3s | %8s %7s %7s %8s | %4s %8s %8s %6s %7s | %-5s %-5s %-5s %-5s\n'
printf "$rfmt" tool run "wall s" "cpu s" "runq s" "RSS MiB" BGs extents "blocks" dirty commits check qrep verif same

kernel_run() {  # RUN
  local run=$1 copy g0 g1 dev marker k_wall k_cpu k_runq k_rss k_rc t0 t1 k_sync k_bgs k_found k_live k_total
  copy=$WORK/kernel.run$run.img
  fresh_copy "$IMG" "$copy"
  g0=$(gen_of "$copy")
  LOOP=$(losetup -f --show "$copy")
  dev=${LOOP#/dev/}
  mount -t btrfs "$LOOP" "$MNT"
  marker="fsctl bench/balance.sh $$ run $run on $dev"
  echo "$marker" > /dev/kmsg
  trace_start
  timed "$WORK/kernel.run$run.out" nice -n "$NICE" "$BTRFS" balance start -m "$MNT"
  k_wall=$T_WALL k_cpu=$T_CPU k_runq=$T_RUNQ k_rss=$T_RSS k_rc=$T_RC
  t0=$(now_ns)
  "$BTRFS" filesystem sync "$MNT"
  t1=$(now_ns)
  trace_stop "$fsid" "$WORK/kernel.run$run.trace"
  k_sync=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  dmesg | awk -v m="$marker" 'index($0, m) { on = 1; next } on' | grep -F "(device $dev)" > "$WORK/kernel.run$run.dmesg" || true
  read -r k_bgs k_found < <(awk '
    /relocating block group/ { g++ }
    /found [0-9]+ extents/ { for (i = 1; i <= NF; i++) if ($i == "found") e += $(i + 1) }
    END { printf "%d %d\n", g, e }' "$WORK/kernel.run$run.dmesg")
  "$BTRFS" qgroup show --raw "$MNT" > "$WORK/kernel.run$run.qshow" 2> "$WORK/kernel.run$run.qshow.err" || true
  if grep -qi inconsistent "$WORK/kernel.run$run.qshow.err"; then k_live=INCONSISTENT; else k_live=consistent; fi
  umount "$MNT"
  losetup -d "$LOOP"
  LOOP=
  g1=$(gen_of "$copy")
  k_total=$(awk -v a="$k_wall" -v b="$k_sync" 'BEGIN { printf "%.3f", a + b }')
  T_WALL=$k_total
  record "balance -m" ref
  checks_after "$copy" "kernel.run$run"
  printf "$rfmt" kernel "$run" "$k_total" "$k_cpu" "$k_runq" "($k_rss)" "$k_bgs" "$k_found" "-" "$TR_DIRTY" "$((g1 - g0))" \
    "${C_CHECK%%(*}" "${C_QREPORT%%(*}" "${C_VERIFY%%(*}" "${C_SAME%% *}"
  echo "        balance $k_wall s + sync $k_sync s; exit $k_rc: $(tr '\n' ' ' < "$WORK/kernel.run$run.out" | sed 's/  */ /g')"
  echo "        kernel log: $(grep -c . "$WORK/kernel.run$run.dmesg") lines; $(grep -o 'relocating block group [0-9]* flags [a-z|]*' "$WORK/kernel.run$run.dmesg" | sed 's/relocating block group //' | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
  echo "        trace: $TR_COMMITS num_dirty_extents events, $TR_ACCOUNT btrfs_qgroup_account_extent; qgroup show on the mounted fs: $k_live"
  echo "        qgroup numbers unchanged: $C_SAME; metadata/system after: $C_META"
  [ "$k_live" = consistent ] || C_QREPORT="$C_QREPORT, kernel flag INCONSISTENT"
  P_WALL[ref]+="$k_total " P_CPU[ref]+="$k_cpu " P_EXT[ref]+="$k_found " P_DIRTY[ref]+="$TR_DIRTY " P_COMMITS[ref]+="$((g1 - g0)) "
  P_QR[ref]+="${C_QREPORT// /_} " P_VER[ref]+="${C_VERIFY// /_} " P_SAME[ref]+="${C_SAME%% *} " P_BGS[ref]+="$k_bgs "
  P_ALONE[ref]+="$(awk -v w="$k_total" -v q="$k_runq" 'BEGIN { printf "%.3f", w - q }') "
  [ "$KEEP" = 1 ] || rm -f "$copy"
}

fsctl_run() {  # TOOL RUN
  local tool=$1 run=$2 bin copy g0 g1 f_wall f_cpu f_runq f_rs f_rc f_mount
  local r_bgs r_ext r_blocks r_dirty r_commits r_res r_used r_secs r_qok r_fields
  bin=$(fsctl_of "$tool")
  if [ "${HAVE_BAL[$tool]}" = 0 ]; then
    printf "$rfmt" "$tool" "$run" "n/a" "" "" "" "" "" "" "" "" "" "" "" ""
    return
  fi
  copy=$WORK/fsctl-$tool.run$run.img
  fresh_copy "$IMG" "$copy"
  g0=$(gen_of "$copy")
  timed "$WORK/fsctl-$tool.run$run.json" nice -n "$NICE" "$bin" --format json balance -m "$copy"
  f_wall=$T_WALL f_cpu=$T_CPU f_runq=$T_RUNQ f_rs=$T_RSS f_rc=$T_RC
  record "balance -m" "$tool"
  g1=$(gen_of "$copy")
  { read -r r_bgs r_ext r_blocks r_dirty r_commits r_res r_used r_secs r_qok; read -r r_fields; } < <(fsctl_fields "$WORK/fsctl-$tool.run$run.json")
  checks_after "$copy" "fsctl-$tool.run$run"
  # The kernel mounts the result (read-only loop device) and sees quota consistent.
  f_mount=FAILED
  LOOP=$(losetup -r -f --show "$copy")
  if mount -t btrfs -o ro "$LOOP" "$MNT" 2> "$WORK/fsctl-$tool.run$run.mount.err"; then
    "$BTRFS" qgroup show --raw "$MNT" > /dev/null 2> "$WORK/fsctl-$tool.run$run.qshow.err" || true
    if grep -qi inconsistent "$WORK/fsctl-$tool.run$run.qshow.err"; then f_mount="mounts, quota INCONSISTENT"; else f_mount="mounts, quota consistent"; fi
    umount "$MNT"
  fi
  losetup -d "$LOOP"
  LOOP=
  printf "$rfmt" "$tool" "$run" "$f_wall" "$f_cpu" "$f_runq" "$f_rs" "$r_bgs" "$r_ext" "$r_blocks" "$r_dirty" "$((g1 - g0))" \
    "${C_CHECK%%(*}" "${C_QREPORT%%(*}" "${C_VERIFY%%(*}" "${C_SAME%% *}"
  echo "        exit $f_rc; report: commits $r_commits, reserved $r_res, used $r_used, seconds $r_secs, qgroups consistent $r_qok; kernel: $f_mount"
  echo "        $r_fields" | cut -c1-400
  [ "$f_rc" = 0 ] || sed 's/^/        fsctl: /' "$WORK/fsctl-$tool.run$run.json" | grep -v '^        fsctl: *[{}"]' | head -10 || true
  echo "        qgroup numbers unchanged: $C_SAME; metadata/system after: $C_META"
  [ "$f_mount" = "mounts, quota consistent" ] || C_QREPORT="$C_QREPORT, kernel: $f_mount"
  P_WALL[$tool]+="$f_wall " P_CPU[$tool]+="$f_cpu " P_EXT[$tool]+="$r_ext " P_DIRTY[$tool]+="$r_dirty " P_COMMITS[$tool]+="$((g1 - g0)) "
  P_QR[$tool]+="${C_QREPORT// /_} " P_VER[$tool]+="${C_VERIFY// /_} " P_SAME[$tool]+="${C_SAME%% *} " P_RSS[$tool]+="$f_rs "
  P_BLOCKS[$tool]+="$r_blocks " P_BGS[$tool]+="$r_bgs "
  P_ALONE[$tool]+="$(awk -v w="$f_wall" -v q="$f_runq" 'BEGIN { printf "%.3f", w - q }') "
  [ "$KEEP" = 1 ] || rm -f "$copy"
}

for run in $(seq 1 "$RUNS"); do
  for tool in $(order_for "$run"); do
    if [ "$tool" = ref ]; then kernel_run "$run"; else fsctl_run "$tool" "$run"; fi
  done
done
echo

# --- side by side -------------------------------------------------------------
# range V...: "min-max" (numbers), the value when all equal, "-" when none
range() {
  [ $# -gt 0 ] || { echo "-"; return; }
  local lo hi
  lo=$(printf '%s\n' "$@" | sort -g | head -1)
  hi=$(printf '%s\n' "$@" | sort -g | tail -1)
  if [ "$lo" = "$hi" ]; then echo "$lo"; else echo "$lo-$hi"; fi
}
# verdict V...: "ok" when all are ok/yes, else the first other value; "-" when none
verdict() {
  [ $# -gt 0 ] || { echo "-"; return; }
  local v
  for v in "$@"; do case $v in ok|yes) ;; *) echo "${v//_/ }"; return ;; esac; done
  echo "ok ($# of $#)"
}

# col FN ARRAY TOOL: FN over the tool's figures, or why there are none
col() {
  local fn=$1 tool=$3 vals
  local -n figures=$2
  if [[ " ${TOOLS[*]} " != *" $tool "* ]]; then
    if [ "$tool" = ref ]; then echo "not measured"; elif [ "$tool" = old ]; then echo "- (no --fsctl-old)"; else echo "-"; fi
    return
  fi
  if [ "$tool" != ref ] && [ "${HAVE_BAL[$tool]}" = 0 ]; then echo "n/a (not available)"; return; fi
  vals=${figures[$tool]:-}
  # shellcheck disable=SC2086
  $fn $vals
}
sfmt='%-48s | %-26s | %-22s | %-22s\n'
printf "$sfmt" "balance -m, $RUNS run(s), min-max" "kernel (btrfs balance -m)" "fsctl old" "fsctl new"
printf "$sfmt" "$(printf '%.0s-' $(seq 48))" "$(printf '%.0s-' $(seq 26))" "$(printf '%.0s-' $(seq 22))" "$(printf '%.0s-' $(seq 22))"
row3() { printf "$sfmt" "$1" "$(col "$2" "$3" ref)" "$(col "$2" "$3" old)" "$(col "$2" "$3" new)"; }
row3 "seconds (wall; kernel: balance + sync)" range P_WALL
row3 "seconds not waiting for a CPU (wall - runq)" range P_ALONE
row3 "CPU seconds (user + sys of the process)" range P_CPU
row3 "block groups relocated (kernel -m: + system)" range P_BGS
row3 "relocated extents" range P_EXT
row3 "tree blocks copied" range P_BLOCKS
row3 "qgroup dirty extents" range P_DIRTY
row3 "commits (superblock generation delta)" range P_COMMITS
row3 "qgroups consistent: btrfs check --qgroup-report" verdict P_QR
row3 "qgroups consistent: fsctl qgroup verify" verdict P_VER
row3 "qgroup numbers unchanged (fsctl qgroup show)" verdict P_SAME
printf "$sfmt" "peak RSS MiB" "$([ "$DO_KERNEL" = 1 ] && echo "n/a (work done in the kernel)" || echo "not measured")" "$(col range P_RSS old)" "$(col range P_RSS new)"
echo
summarize "balance -m" "$(basename "$IMG" .img)" "$REF_LABEL" "n/a (kernel)"
bench_footer
