#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/walk.sh: whole-filesystem metadata read, fsctl against the physical
# floor and against btrfs check (issue 2, last acceptance bullet).
#
#   sudo bench/walk.sh [IMG]
#
# IMG defaults to /var/tmp/fsctl-bench/balance-16snap-4k.img. When it does not
# exist it is built with ../shared/bench-images/make-balance-16snap-4k.sh
# (loop mount, ~110,000 small files from /usr, 16 snapshots, quota on; needs
# root and ~2 GB) and kept there for the next run (never inside the repo).
#
# In one run, page cache dropped before every timing
# (sync; echo 3 > /proc/sys/vm/drop_caches), RUNS times each (default 3):
#   fsctl  `fsctl inspect tree-stats IMG`: every tree block of every tree read
#          once and verified (csum, bytenr, fsid, level, generation, first key)
#   floor  `dd iflag=direct bs=4M` over the used metadata bytes: for each
#          METADATA or SYSTEM chunk, the first `used` bytes (its block group's
#          used counter) of the chunk's first stripe; the same byte count fsctl
#          must verify, read sequentially with nothing else to do
#   check  `btrfs check --readonly IMG`
# Wall time and peak RSS come from /usr/bin/time. The medians are compared;
# targets (issue 2): fsctl <= 2x floor, btrfs check >= 5x fsctl, fsctl peak RSS
# < cache budget (256 MiB default) + 64 MiB.
#
# Environment: FSCTL (binary; default build-bench/fsctl, then build/fsctl),
# RUNS (default 3), CACHE_MIB (fsctl --cache-size in MiB, default 256),
# SKIP_CHECK=1 (leave out btrfs check, e.g. while profiling), NICE (niceness
# of the three timed commands, default -10, the same for all three: it keeps
# other jobs of a shared machine from stretching the short runs; 0 = off).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
IMG=${1:-/var/tmp/fsctl-bench/balance-16snap-4k.img}
RUNS=${RUNS:-3}
CACHE_MIB=${CACHE_MIB:-256}
NICE=${NICE:--10}
MAKE_IMG="$REPO/../shared/bench-images/make-balance-16snap-4k.sh"

die() { echo "walk.sh: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "run as root (drop_caches, loop mount for the image build)"

if [ -z "${FSCTL:-}" ]; then
  for c in "$REPO/build-bench/fsctl" "$REPO/build/fsctl"; do
    if [ -x "$c" ]; then FSCTL=$c; break; fi
  done
fi
[ -n "${FSCTL:-}" ] && [ -x "$FSCTL" ] || die "no fsctl binary; build one (Release) or set FSCTL"
if [ ! -x /usr/bin/time ]; then
  echo "walk.sh: installing GNU time" >&2
  apt-get install -y -qq time >/dev/null
fi
command -v btrfs >/dev/null || die "btrfs (btrfs-progs) not found"
command -v python3 >/dev/null || die "python3 not found"

if [ ! -e "$IMG" ]; then
  [ -x "$MAKE_IMG" ] || [ -f "$MAKE_IMG" ] || die "$IMG missing and no $MAKE_IMG to build it"
  mkdir -p "$(dirname "$IMG")"
  echo "walk.sh: building $IMG with $(basename "$MAKE_IMG") (a few minutes)" >&2
  bash "$MAKE_IMG" "$IMG" >&2
fi

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# timed NAME CMD...: runs CMD with caches dropped; appends "wall_s rss_kib" to $W/NAME.
timed() {
  local name=$1; shift
  drop_caches
  nice -n "$NICE" /usr/bin/time -f "%e %M" -o "$W/t" "$@" > "$W/$name.out" 2> "$W/$name.err" || {
    local rc=$?
    # btrfs check exits 1 when it finds problems; the timing still counts, but say so.
    echo "walk.sh: '$*' exited $rc:" >&2; tail -3 "$W/$name.err" >&2
    [ "$name" = check ] || exit 1
  }
  tail -1 "$W/t" >> "$W/$name.times"
}

# --- which physical bytes hold metadata -------------------------------------
"$FSCTL" inspect dump-tree --format json -t chunk "$IMG" > "$W/chunks.json"
"$FSCTL" inspect block-groups --format json "$IMG" > "$W/bgs.json"
python3 - "$W/chunks.json" "$W/bgs.json" > "$W/ranges" <<'EOF'
import json, sys
chunks = json.load(open(sys.argv[1]))
bgs = {b["start"]: b for b in json.load(open(sys.argv[2]))["block_groups"]}
SYSTEM, METADATA = 0x2, 0x4
for t in chunks["trees"]:
    for blk in t["blocks"]:
        for it in blk.get("items", []):
            if it["key"]["type_name"] != "CHUNK_ITEM":
                continue
            c = it["data"]
            if not c["type"] & (SYSTEM | METADATA):
                continue
            MIRRORED = 0x10 | 0x20 | 0x200 | 0x400  # RAID1, DUP, RAID1C3, RAID1C4: stripe 0 is a full copy
            if c["num_stripes"] > 1 and not c["type"] & MIRRORED:
                sys.exit("walk.sh: striped metadata profile %s not supported by the floor computation" % c["type_name"])
            start = it["key"]["offset"]
            used = bgs[start]["used"]
            s = c["stripes"][0]
            # logical start, physical offset of stripe 0, used bytes, chunk length, type
            print(start, s["offset"], used, c["length"], c["type_name"])
EOF
META_USED=$(awk '{s+=$3} END{print s}' "$W/ranges")

floor_read() {  # reads the first `used` bytes of each metadata/system chunk's first stripe
  while read -r _ phys used _ _; do
    [ "$used" -gt 0 ] || continue
    dd if="$IMG" of=/dev/null bs=4M iflag=direct,skip_bytes,count_bytes skip="$phys" count="$used" status=none
  done < "$W/ranges"
}
export -f floor_read
export IMG W NICE

# --- the runs (interleaved, so slow drifts hit all three alike) -------------
for r in $(seq 1 "$RUNS"); do
  timed fsctl "$FSCTL" --cache-size "${CACHE_MIB}M" inspect tree-stats --format json "$IMG"
  cp "$W/fsctl.out" "$W/fsctl.$r.json"
  timed floor bash -c floor_read
  [ "${SKIP_CHECK:-0}" = 1 ] || timed check btrfs check --readonly "$IMG"
done

# --- report ------------------------------------------------------------------
echo "# bench/walk.sh $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# machine: $(nproc) CPUs, $(free -m | awk '/^Mem:/{printf "%.1f GiB RAM", $2/1024}'), kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# fsctl: $FSCTL (repo HEAD $(git -C "$REPO" log -1 --format=%h 2>/dev/null || echo '?') at run time)"
echo "# btrfs: $(btrfs --version 2>/dev/null | head -1)"
python3 - "$W" "$RUNS" "$META_USED" "$CACHE_MIB" "$IMG" "$FSCTL" "${SKIP_CHECK:-0}" <<'EOF'
import json, statistics, sys, os
w, runs, meta_used, cache_mib, img, fsctl, skip_check = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7] == "1"
def load(name):
    p = os.path.join(w, name + ".times")
    if not os.path.exists(p):
        return []
    return [tuple(map(float, l.split())) for l in open(p) if l.strip()]
t = {n: load(n) for n in ("fsctl", "floor", "check")}
med = {n: (statistics.median(x[0] for x in v), max(x[1] for x in v) / 1024) for n, v in t.items() if v}
ts = json.load(open(os.path.join(w, "fsctl.1.json")))
ranges = [l.split() for l in open(os.path.join(w, "ranges"))]
print(f"image        {img}")
print(f"fsctl        {fsctl} (--cache-size {cache_mib}M)")
print(f"metadata     {meta_used} bytes used ({meta_used/2**20:.1f} MiB) in {len(ranges)} metadata/system chunks:")
for lg, ph, used, ln, ty in ranges:
    print(f"               logical {lg} physical {ph} used {used} of {ln} ({ty})")
print(f"tree-stats   {ts['unique_blocks']} tree blocks, {ts['unique_bytes']} bytes verified "
      f"({'= used metadata' if ts['unique_bytes'] == meta_used else '!= used metadata %d' % meta_used}), "
      f"{ts['bytes_read']} bytes read from the device")
print("floor        dd iflag=direct bs=4M over the first `used` bytes of each metadata/system chunk's first stripe")
print(f"runs         {runs}, page cache dropped before each timing; median wall time, max peak RSS; niceness {os.environ.get('NICE', '-10')}")
print()
print(f"{'':8} {'wall s (each run)':>28} {'median s':>9} {'peak RSS MiB':>13}")
for n, label in (("fsctl", "fsctl"), ("floor", "floor"), ("check", "check")):
    if n not in med:
        continue
    each = " ".join(f"{x[0]:.2f}" for x in t[n])
    print(f"{label:8} {each:>28} {med[n][0]:9.3f} {med[n][1]:13.1f}")
print()
ok_all = True
def target(name, ok, text):
    global ok_all
    ok_all &= ok
    print(f"{'MET   ' if ok else 'MISSED'} {name:28} {text}")
f, fl = med["fsctl"][0], med["floor"][0]
target("fsctl within 2x of floor", f <= 2 * fl, f"fsctl/floor = {f/fl:.2f}x (target <= 2)")
if "check" in med:
    c = med["check"][0]
    target("5x faster than btrfs check", c >= 5 * f, f"check/fsctl = {c/f:.1f}x (target >= 5; check peak RSS {med['check'][1]:.0f} MiB)")
rss = med["fsctl"][1]
target("fsctl peak RSS", rss < cache_mib + 64, f"{rss:.1f} MiB (target < {cache_mib} + 64 = {cache_mib + 64} MiB)")
sys.exit(0 if ok_all else 1)
EOF
