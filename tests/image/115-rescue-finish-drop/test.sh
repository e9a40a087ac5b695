#!/usr/bin/env bash
# 115-rescue-finish-drop: `fsctl rescue finish-drop` finishes the deletion
# of subvolumes offline (the kernel cleaner's drop). Kernel-made image
# (4K nodes, quota, level-1 qgroup 1/100): subvolume sv (20,000 files, a
# quarter with regular extents), its snapshot snap, snap2 a snapshot of
# snap, files changed in all three after the snapshots (shared blocks made
# after a root was created: the UPDATE_BACKREF case), and lone (exclusive
# data with checksums). sv, snap and lone are deleted; two states:
#  - A: deleted and unmounted at once (not dropped yet);
#  - F: frozen (fsfreeze) during the kernel's drop and copied: a half-dropped
#    root with the kernel's drop_progress (when the freeze catches the
#    drop; the test says when it did not and goes on with what it got).
# On F: the dry run writes nothing; the run gives what the kernel gives
# when it finishes the same drop on a copy: `btrfs qgroup show --raw` (after
# the kernel's rescan) equal, the dropped subvolumes' qgroups removed, the
# extent tree's references of subvolume trees and data the same (count by
# refs, flags and backref type), btrfs check --readonly --qgroup-report
# clean, no ROOT_ITEM with refs 0 and no ORPHAN item left, every remaining
# file's sha256 unchanged, the kernel mounts it. With --batch 64 (many
# commits) the same result. Stopped after a few writes (one commit or
# more): the kernel resumes our drop_progress and finishes. A crash at every
# write of a run on a smaller image: check clean, the rerun completes.
# Refusals: mounted (exit 5); nothing to do says so (exit 0).
source "$(dirname "$0")/../common/lib.sh"
need_mount
command -v fsfreeze > /dev/null || skip "fsfreeze (util-linux) is not installed"
MNT="$T/mnt"
mkdir -p "$MNT"
LOOPS=()
trap '{ fsfreeze -u "$MNT" 2> /dev/null || true; }; release_all "$MNT" -- "${LOOPS[@]}"' EXIT

BASE="$T/base.img"
mkimg "$BASE" 1G -n 4096
mount -o loop "$BASE" "$MNT"
btrfs quota enable "$MNT"
btrfs subvolume create "$MNT/sv" > /dev/null
many_files "$MNT/sv" 20000 5000
btrfs subvolume snapshot "$MNT/sv" "$MNT/snap" > /dev/null
for i in $(seq 1 300); do echo changed > "$MNT/snap/f$((i * 61))"; done
for i in $(seq 1 100); do echo changed > "$MNT/sv/f$((i * 97))"; done
btrfs subvolume snapshot "$MNT/snap" "$MNT/snap2" > /dev/null
for i in $(seq 1 50); do head -c 9000 /dev/urandom > "$MNT/snap2/f$((i * 31))"; done
btrfs subvolume create "$MNT/lone" > /dev/null
for i in $(seq 1 300); do head -c 8192 /dev/urandom > "$MNT/lone/d$i"; done
for i in $(seq 1 10); do head -c 20000 /dev/urandom > "$MNT/top$i"; done
btrfs qgroup create 1/100 "$MNT"
btrfs qgroup assign --no-rescan 0/256 1/100 "$MNT" > /dev/null 2>&1 || true
btrfs qgroup assign --no-rescan 0/258 1/100 "$MNT" > /dev/null 2>&1 || true
btrfs quota rescan -w "$MNT" > /dev/null
(cd "$MNT" && find snap2 top* -type f -print0 | sort -z | xargs -0 sha256sum) > "$T/files.sum"
umount "$MNT"

delete_all() { btrfs subvolume delete "$MNT/sv" "$MNT/snap" "$MNT/lone" > /dev/null; }
# dead_roots IMG: "id:started" for every subvolume ROOT_ITEM with refs 0.
dead_roots() {
  "$FSCTL" --format json inspect dump-tree -t root "$1" | python3 -c '
import json, sys
j = json.load(sys.stdin)
out = []
def walk(o):
    if isinstance(o, dict):
        k, b = o.get("key"), o.get("data")
        if isinstance(k, dict) and k.get("type_name") == "ROOT_ITEM" and isinstance(b, dict) and b.get("refs") == 0:
            dp = b.get("drop_progress") or {}
            out.append("%s:%s" % (k.get("objectid"), 1 if dp.get("objectid") else 0))
        for v in o.values(): walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
walk(j)
print(" ".join(out))'
}

# A: deleted, unmounted at once.
A="$T/a.img"
cp --sparse=always "$BASE" "$A"
mount -o loop "$A" "$MNT"
delete_all
umount "$MNT"
dead=$(dead_roots "$A")
echo "A: dead roots (id:started) $dead"
[ -n "$dead" ] || fail "A: the kernel dropped the deleted subvolumes before the unmount"

# F: frozen during the drop (up to three tries to catch it half way).
F="$T/f.img"
half=0
for try in 1 2 3; do
  cp --sparse=always "$BASE" "$T/live.img"
  mount -o loop "$T/live.img" "$MNT"
  delete_all
  btrfs filesystem sync "$MNT"
  fsfreeze -f "$MNT"
  cp --sparse=always "$T/live.img" "$F"
  fsfreeze -u "$MNT"
  umount "$MNT"
  dead=$(dead_roots "$F")
  echo "F (try $try): dead roots (id:started) $dead"
  case " $dead" in *:1*) half=1; break ;; esac
done
if [ $half -eq 0 ]; then
  echo "NOTE: the freeze did not catch a half-dropped root in 3 tries; F is the state it caught"
  [ -n "$dead" ] || cp --sparse=always "$A" "$F"
fi
# The kernel's qgroup numbers of a half-dropped state are its own mid-way
# ones (btrfs check computes others): only those may differ.
if ! btrfs check --readonly "$F" > "$T/f.check" 2>&1; then
  grep_q "Counts for qgroup id" < "$T/f.check" && ! grep_q -E "ERROR|ref mismatch|backpointer|missing|Errors found" < "$T/f.check" ||
    { cat "$T/f.check"; fail "F does not check clean"; }
fi

# The extent tree's references of subvolume trees and data extents, counted
# by kind (no bytenrs or generations: the same drop gives the same counts).
ref_shape() {
  btrfs inspect-internal dump-tree -t extent "$1" | python3 -c '
import re, sys, collections
c = collections.Counter()
for line in sys.stdin:
    m = re.search(r"refs (\d+) gen \d+ flags (\S+)", line)
    if m and ("DATA" in m.group(2) or "FULL_BACKREF" in m.group(2)):
        c["refs %s flags %s" % m.groups()] += 1
    m = re.search(r"(tree block|shared block|extent data|shared data) backref (root|parent) (\d+)", line)
    if m:
        kind, what, n = m.groups()
        if what == "root" and int(n) < 256 and kind == "tree block":
            continue  # global trees: their blocks differ with the commits
        c["%s backref %s" % (kind, n if what == "root" else "P")] += 1
for k in sorted(c): print(c[k], k)'
}
qgroups_of() { mount -o loop "$1" "$MNT" && btrfs qgroup show --raw "$MNT" | tail -n +3 > "$2"; umount "$MNT"; }

# The kernel finishes the drop of F on a copy: the reference.
cp --sparse=always "$F" "$T/k.img"
mount -o loop "$T/k.img" "$MNT"
btrfs subvolume sync "$MNT" > /dev/null
btrfs quota rescan -w "$MNT" > /dev/null
btrfs qgroup show --raw "$MNT" | tail -n +3 > "$T/k.q"
umount "$MNT"
ref_shape "$T/k.img" > "$T/k.shape"

# Dry run: nothing written.
before=$(img_sum "$F")
"$FSCTL" rescue finish-drop -n "$F" > "$T/dry.out" || fail "dry run"
[ "$(img_sum "$F")" = "$before" ] || fail "the dry run changed the image"
grep_q "^dry run: would free" < "$T/dry.out" || { cat "$T/dry.out"; fail "dry run text"; }

# The run.
check_done() {  # IMG LABEL
  btrfs check --readonly --qgroup-report "$1" > "$T/check.out" 2>&1 || { cat "$T/check.out"; fail "$2: btrfs check"; }
  ! grep_q -E "are different|ERROR|error:" < "$T/check.out" || { cat "$T/check.out"; fail "$2: btrfs check reports"; }
  if [ -x /var/tmp/btrfs-progs-ref/btrfs ]; then
    "$CHECK_RETRY" /var/tmp/btrfs-progs-ref/btrfs check --readonly --qgroup-report "$1" > "$T/check2.out" 2>&1 ||
      { cat "$T/check2.out"; fail "$2: btrfs check (built btrfs-progs)"; }
  fi
  "$FSCTL" qgroup verify "$1" > "$T/verify.out" 2>&1 || { cat "$T/verify.out"; fail "$2: fsctl qgroup verify"; }
  [ -z "$(dead_roots "$1")" ] || fail "$2: a ROOT_ITEM with refs 0 is left"
  ! btrfs inspect-internal dump-tree -t root "$1" | grep_q "ORPHAN_ITEM" || fail "$2: an ORPHAN item is left"
  ref_shape "$1" > "$T/shape"
  diff "$T/k.shape" "$T/shape" || fail "$2: the extent references differ from the kernel's drop"
  qgroups_of "$1" "$T/q"
  diff "$T/k.q" "$T/q" || fail "$2: qgroups differ from the kernel's after its drop and rescan"
}
cp --sparse=always "$F" "$T/r.img"
"$FSCTL" --format json rescue finish-drop "$T/r.img" > "$T/run.json" || fail "finish-drop"
python3 - "$T/run.json" <<'PY' || fail "run JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert not j["dry_run"] and not j["interrupted"] and j["commits"] >= 1, j
assert len(j["subvolumes"]) == 3 and all(s["dropped"] for s in j["subvolumes"]), j["subvolumes"]
d = j["drop"]
assert d["tree_blocks_freed"] > 0 and d["shared_blocks_left"] > 0 and d["blocks_to_full_backref"] > 0, d
assert d["data_extents_freed"] >= 300 and d["data_bytes_freed"] >= 300 * 8192, d
q = j["qgroups"]
assert q["wrote"] and sorted(q["qgroups_removed"]) == ["0/256", "0/257", "0/259"], q
assert 0 < j["used_bytes"] <= j["reserved_bytes"], j
PY
check_done "$T/r.img" "run"
mount -o loop "$T/r.img" "$MNT"
(cd "$MNT" && sha256sum --quiet -c "$T/files.sum") || fail "file contents changed"
echo more > "$MNT/after"
umount "$MNT"
btrfs check --readonly "$T/r.img" > /dev/null 2>&1 || fail "btrfs check after the kernel wrote"
out=$("$FSCTL" rescue finish-drop "$T/r.img") || fail "rerun"
[ "$out" = "no deleted subvolume is waiting to be dropped: nothing to do" ] || fail "rerun said: $out"

# Many commits: the same result.
cp --sparse=always "$F" "$T/b.img"
"$FSCTL" rescue finish-drop --batch 64 "$T/b.img" > "$T/batch.out" || { cat "$T/batch.out"; fail "finish-drop --batch 64"; }
commits=$(sed -n 's/^\([0-9]*\) commits.*/\1/p' "$T/batch.out")
[ "${commits:-0}" -ge 10 ] || { cat "$T/batch.out"; fail "--batch 64 made ${commits:-no} commits"; }
check_done "$T/b.img" "batch 64"

# Stopped after some commits: our drop_progress, resumed by the kernel.
cp --sparse=always "$F" "$T/s.img"
rc=0; FSCTL_FAIL_AFTER_WRITES=40 "$FSCTL" rescue finish-drop --batch 64 "$T/s.img" > /dev/null 2>&1 || rc=$?
[ $rc -eq 86 ] || fail "stopped run: exit $rc, expect 86"
case " $(dead_roots "$T/s.img")" in *:1*) ;; *) fail "no half-dropped root after 40 writes: $(dead_roots "$T/s.img")" ;; esac
btrfs check --readonly "$T/s.img" > /dev/null 2>&1 || fail "btrfs check of the stopped run"
mount -o loop "$T/s.img" "$MNT"
btrfs subvolume sync "$MNT" > /dev/null
btrfs quota rescan -w "$MNT" > /dev/null
umount "$MNT"
check_done "$T/s.img" "kernel resumed our drop"

# A crash at every write, on a smaller image (sv deleted, not dropped).
C="$T/c.img"
mksnapimg "$C" 600 20
mount -o loop "$C" "$MNT"
for i in $(seq 1 40); do echo changed > "$MNT/sv/f$((i * 13))"; done
btrfs subvolume delete "$MNT/sv" > /dev/null
umount "$MNT"
[ -n "$(dead_roots "$C")" ] || fail "C: sv was dropped before the unmount"
after_crash() { [ -z "$(dead_roots "$1")" ] || fail "crash at $2: a dead root is left after the rerun"; "$FSCTL" qgroup verify "$1" > /dev/null 2>&1 || fail "crash at $2: qgroups wrong after the rerun"; }
crash_every_write "$C" after_crash rescue finish-drop --batch 40

# Refusals.
cp --sparse=always "$A" "$T/m.img"
mount -o loop "$T/m.img" "$MNT"
rc=0; "$FSCTL" rescue finish-drop "$T/m.img" > /dev/null 2>&1 || rc=$?
umount "$MNT"
[ $rc -eq 5 ] || fail "mounted: exit $rc, expect 5"
echo "PASS"
