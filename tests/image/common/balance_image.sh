# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
# Quota images for `fsctl balance -m` tests, and a record of everything a
# balance must not change. Source after common/lib.sh; the caller runs
# need_mount first (every function here mounts a loop device).
#
#   make_balance_image IMG NODESIZE [SCALE]
#       mkfs.btrfs -n NODESIZE (default metadata profile: DUP on one device) on
#       a 1 GiB sparse file, then through a loop mount: quota enabled on the
#       empty filesystem; subvolume `base` with SCALE small files (default
#       3000; inline, 3-16 KiB incompressible and compressible ones, 100 per
#       directory); base/z with the btrfs property compression=zstd and 20
#       compressible files of 64-256 KiB (zstd extents); base/blob (1 MiB)
#       reflinked as base/blob.clone; SNAPS (default 16, env
#       BALANCE_IMAGE_SNAPS) snapshots snap1..snapN of base, each with 3 files
#       appended a line, every 4th with a file deleted, every 5th with a new
#       file; a cross-subvolume reflink of a compressed file into snap2; a
#       level-1 qgroup 1/100 with base, snap1 and snap2 as members; `btrfs
#       quota rescan -w`, sync, unmount. Deterministic apart from mkfs's
#       uuids and timestamps. About 5 s at nodesize 4K and SCALE 3000.
#   record_state IMG DIR
#       Writes into DIR (created) what a metadata balance must keep:
#         kernel-qgroups.txt  `btrfs qgroup show --raw -pcre` of a read-only
#                             mount, normalized (qgroupid rfer excl max_rfer
#                             max_excl parents children) plus a status line
#                             (whether progs warned "inconsistent")
#         fsctl-qgroups.txt   the same from `fsctl --format json qgroup show`
#                             (on-disk numbers, compressed ones too, limits,
#                             relations, the inconsistent flag)
#         subvolumes.txt      `btrfs subvolume list` ids and paths
#         files.txt           every directory, symlink (target) and regular
#                             file (mode, size, sha256) of every subvolume and
#                             snapshot, paths relative to the top level
#       and, for the caller, not compared:
#         fsctl-qgroups.json, block-groups.json (`fsctl --format json qgroup
#         show` / `inspect block-groups`), kernel-qgroups.raw/.err.
#       The image is mounted through a read-only loop device (`losetup -r`,
#       `mount -o ro`), so recording never changes it.
#   compare_state DIR1 DIR2
#       Returns 0 when the qgroup numbers (kernel and fsctl), the subvolume
#       list and the file list are equal; otherwise prints the first
#       difference (which qgroup and field, or which path) to stderr and
#       returns 1.
#   state_bg_summary DIR
#       One line per block group of DIR/block-groups.json: "start length used
#       flags_name", for a caller that checks what a balance moved.

BI_MOUNTS=()
BI_LOOPS=()
_bi_cleanup() { release_all "${BI_MOUNTS[@]}" -- "${BI_LOOPS[@]}"; }
# Chain onto an EXIT trap the caller may already have.
_bi_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
# shellcheck disable=SC2064
trap "_bi_cleanup; ${_bi_prev_trap:-:}" EXIT

# _bi_files DIR N SEED: N files in sub-directories of 100: inline (<= 2000
# bytes), 3-16 KiB random, 3-16 KiB text.
_bi_files() {
  python3 - "$@" <<'PY'
import os, random, sys
d, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
for i in range(n):
    sub = os.path.join(d, "d%03d" % (i // 100))
    os.makedirs(sub, exist_ok=True)
    kind = i % 3
    if kind == 0:
        data = rnd.randbytes(rnd.randint(1, 2000))
    elif kind == 1:
        data = rnd.randbytes(rnd.randint(3072, 16384))
    else:
        size = rnd.randint(3072, 16384)
        data = ("file %d line of text\n" % i * (size // 20 + 1)).encode()[:size]
    with open(os.path.join(sub, "f%05d" % i), "wb") as f:
        f.write(data)
PY
}

make_balance_image() {
  local img=${1:?make_balance_image IMG NODESIZE [SCALE]} ns=${2:?nodesize} scale=${3:-3000}
  local snaps=${BALANCE_IMAGE_SNAPS:-16}
  local m="$T/.bi-mnt.$$" i id s
  mkimg "$img" 1G -n "$ns" -L balimg
  mkdir -p "$m"
  mount -o loop,noatime "$img" "$m"
  BI_MOUNTS+=("$m")
  btrfs quota enable "$m"
  btrfs subvolume create "$m/base" >/dev/null
  _bi_files "$m/base" "$scale" 1
  mkdir "$m/base/z"
  btrfs property set "$m/base/z" compression zstd
  python3 - "$m/base/z" <<'PY'
import os, random, sys
rnd = random.Random(2)
for i in range(20):
    size = rnd.randint(64 << 10, 256 << 10)
    line = "compressible line %d of zstd file %d\n"
    data = "".join(line % (j, i) for j in range(size // 30 + 1)).encode()[:size]
    open(os.path.join(sys.argv[1], "c%02d" % i), "wb").write(data)
PY
  head -c 1M /dev/urandom > "$m/base/blob"
  cp --reflink=always "$m/base/blob" "$m/base/blob.clone"
  sync
  ( cd "$m/base" && find . -type f ! -path './z/*' | LC_ALL=C sort ) > "$T/.bi-files"
  for i in $(seq 1 "$snaps"); do
    btrfs subvolume snapshot "$m/base" "$m/snap$i" >/dev/null
    python3 - "$m/snap$i" "$T/.bi-files" "$i" <<'PY'
import os, random, sys
root, listing, i = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = open(listing).read().split("\n")[:-1]
rnd = random.Random(1000 + i)
pick = rnd.sample(files, 4)
for f in pick[:3]:
    with open(os.path.join(root, f), "a") as fh:
        fh.write("appended in snap%d\n" % i)
if i % 4 == 0:
    os.unlink(os.path.join(root, pick[3]))
if i % 5 == 0:
    open(os.path.join(root, "new-in-snap%d" % i), "wb").write(rnd.randbytes(6000))
PY
  done
  cp --reflink=always "$m/base/z/c03" "$m/snap2/c03.reflink"
  sync
  # Level-1 qgroup: assign schedules a rescan when the numbers change; wait
  # for it, or the next assign fails with EINPROGRESS.
  btrfs qgroup create 1/100 "$m"
  for s in base snap1 snap2; do
    id=$(btrfs inspect-internal rootid "$m/$s")
    btrfs qgroup assign "0/$id" 1/100 "$m" >/dev/null 2>&1 || true
    btrfs quota rescan -W "$m" >/dev/null 2>&1 || true
  done
  btrfs qgroup show --raw -pcre "$m" | awk '$1 == "1/100" { ok = ($7 ~ /,/) } END { exit !ok }' ||
    fail "make_balance_image: qgroup 1/100 did not get its members"
  sync
  btrfs quota rescan -w "$m" >/dev/null
  sync
  umount "$m"
  rmdir "$m"
  _bi_forget - "$m"
}

# _bi_ro_mount IMG MNT: read-only loop device, read-only mount; sets BI_LOOP.
_bi_ro_mount() {
  BI_LOOP=$(losetup -r -f --show "$1")
  BI_LOOPS+=("$BI_LOOP")
  mkdir -p "$2"
  mount -t btrfs -o ro "$BI_LOOP" "$2"
  BI_MOUNTS+=("$2")
}
# _bi_ro_umount LOOP MNT: unmount, detach, and forget both (a loop device
# number freed here may be someone else's by the time the EXIT trap runs).
_bi_ro_umount() {
  umount "$2"
  loop_release "$1"
  rmdir "$2"
  _bi_forget "$1" "$2"
}
_bi_forget() {
  local x keep=()
  for x in "${BI_LOOPS[@]}"; do [ "$x" = "$1" ] || keep+=("$x"); done
  BI_LOOPS=("${keep[@]}")
  keep=()
  for x in "${BI_MOUNTS[@]}"; do [ "$x" = "$2" ] || keep+=("$x"); done
  BI_MOUNTS=("${keep[@]}")
}

record_state() {
  local img=${1:?record_state IMG DIR} dir=${2:?record_state IMG DIR} m="$T/.bi-ro.$$"
  mkdir -p "$dir"
  _bi_ro_mount "$img" "$m"
  local loop=$BI_LOOP
  btrfs qgroup show --raw -pcre "$m" > "$dir/kernel-qgroups.raw" 2> "$dir/kernel-qgroups.err"
  btrfs subvolume list "$m" | awk '{ id = $2; sub(/^.* path /, ""); print id, $0 }' > "$dir/subvolumes.txt"
  python3 - "$m" > "$dir/files.txt" <<'PY'
import hashlib, os, stat, sys
top = sys.argv[1]
out = []
for d, dirs, files in os.walk(top):
    dirs.sort()
    rel = os.path.relpath(d, top)
    out.append("d %s" % rel)
    for name in sorted(files + [x for x in dirs if os.path.islink(os.path.join(d, x))]):
        p = os.path.join(d, name)
        r = os.path.relpath(p, top)
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            out.append("l %s -> %s" % (r, os.readlink(p)))
        elif stat.S_ISREG(st.st_mode):
            h = hashlib.sha256()
            with open(p, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            out.append("f %s %o %d %s" % (r, stat.S_IMODE(st.st_mode), st.st_size, h.hexdigest()))
        else:
            out.append("o %s %o" % (r, st.st_mode))
out.sort()
sys.stdout.write("\n".join(out) + "\n")
PY
  _bi_ro_umount "$loop" "$m"
  python3 - "$dir/kernel-qgroups.raw" "$dir/kernel-qgroups.err" > "$dir/kernel-qgroups.txt" <<'PY'
import re, sys
raw, err = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read()
for line in raw:
    f = line.split()
    if not f or not re.match(r"^\d+/\d+$", f[0]):
        continue
    # qgroupid rfer excl max_rfer max_excl parent child [path]: the path is
    # a name and not a number; relations are kept as printed.
    print(" ".join(f[:7]))
print("status %s" % ("inconsistent" if "inconsistent" in err.lower() else "consistent"))
PY
  "$FSCTL" --format json qgroup show "$img" > "$dir/fsctl-qgroups.json"
  "$FSCTL" --format json inspect block-groups "$img" > "$dir/block-groups.json"
  python3 - "$dir/fsctl-qgroups.json" > "$dir/fsctl-qgroups.txt" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for q in j.get("qgroups", []):
    print(q["qgroupid"], " ".join("%s=%s" % (k, q.get(k)) for k in (
        "referenced", "exclusive", "referenced_compressed", "exclusive_compressed",
        "max_referenced", "max_exclusive")),
        "parents=" + ",".join(sorted(q.get("parents") or [])),
        "children=" + ",".join(sorted(q.get("children") or [])))
st = j.get("status") or {}
print("status quota_enabled=%s inconsistent=%s rescan_running=%s" % (
    j.get("quota_enabled"), st.get("inconsistent"), st.get("rescan_running")))
PY
}

compare_state() {
  python3 - "${1:?compare_state DIR1 DIR2}" "${2:?compare_state DIR1 DIR2}" <<'PY'
import os, sys
a, b = sys.argv[1], sys.argv[2]
parts = [
    ("kernel-qgroups.txt", "qgroup numbers (btrfs qgroup show --raw)"),
    ("fsctl-qgroups.txt", "qgroup numbers (fsctl qgroup show)"),
    ("subvolumes.txt", "subvolume list"),
    ("files.txt", "files"),
]
for name, what in parts:
    la = open(os.path.join(a, name)).read().splitlines()
    lb = open(os.path.join(b, name)).read().splitlines()
    if la == lb:
        continue
    # Key each line by its first fields (the qgroup id, or the path), so the
    # message says which qgroup or file differs, or which one is missing.
    def key(line):
        if name == "subvolumes.txt":
            return line
        if name != "files.txt":
            return line.split(" ")[0]
        kind, _, rest = line.partition(" ")
        if kind == "f":          # f PATH MODE SIZE SHA256 (the path may hold spaces)
            return "file " + rest.rsplit(" ", 3)[0]
        if kind == "l":          # l PATH -> TARGET
            return "symlink " + rest.split(" -> ")[0]
        if kind == "o":          # o PATH MODE
            return "other " + rest.rsplit(" ", 1)[0]
        return "directory " + rest
    da = {key(x): x for x in la}
    db = {key(x): x for x in lb}
    for k in sorted(set(da) | set(db)):
        if da.get(k) != db.get(k):
            print("compare_state: %s differ at %s:\n  %s: %s\n  %s: %s" % (
                what, k, a, da.get(k, "(missing)"), b, db.get(k, "(missing)")), file=sys.stderr)
            sys.exit(1)
    print("compare_state: %s differ (%d vs %d lines)" % (what, len(la), len(lb)), file=sys.stderr)
    sys.exit(1)
PY
}

state_bg_summary() {
  python3 -c '
import json, sys
for g in json.load(open(sys.argv[1]))["block_groups"]:
    print(g["start"], g["length"], g["used"], g["flags_name"])' "${1:?state_bg_summary DIR}/block-groups.json"
}
