#!/usr/bin/env bash
# 070-tree-property: the property test of issue 4 on real mkfs.btrfs images.
# tests/tools/tree_torture plans seeded random insert / delete / delete-a-run /
# grow / shrink / update / COW-search operations on a scratch tree (objectid
# 200, key types 2 and 9: tree_torture.cpp says why btrfs check accepts any
# content there), reserves for them, runs them over many transactions,
# compares the tree read back through the read side on a fresh open with its
# model after every commit, and runs `btrfs check --readonly` after every
# commit. Proves, on 4K and 16K nodes, crc32c / xxhash / sha256 / blake2
# checksums, DUP and single metadata:
#  - splits at every level (height >= 3 at 4K); pushes into siblings before
#    splits and merges after deletions, counted by the write code and
#    asserted > 0 at the leaves and at node level (runs a and d); leaves
#    emptied and unlinked; the height going down again after the mass
#    deletions of the shrink phases (height drops > 0);
#  - the free space tree in bitmap form (a metadata block group the kernel
#    converted to bitmaps after fragmenting it; skipped where mount does not
#    work) stays right, as btrfs check verifies;
#  - free-space bitmap conversion by our commit (run f, --mix fragment): a
#    256 MiB metadata group of our own, filled with 900 one-leaf items, then
#    every other one deleted, goes past the kernel's bitmap_high_thresh (359
#    extents) and is converted to 32 FREE_SPACE_BITMAP items with
#    USING_BITMAPS set; the rest deleted, it falls below bitmap_low_thresh
#    (259) and is converted back to FREE_SPACE_EXTENT items, flag cleared;
#    btrfs check after every commit, and the kernel mounts the result
#    read-write, writes a file, and btrfs check passes again;
#  - reservations: used_bytes <= reserved_bytes in every transaction (the tool
#    fails otherwise) both for the planned reservation (the transaction's
#    changes replayed on a shadow of the tree: runs a-d, where the tool also
#    checks that the replay did exactly what the real run did) and for the
#    reservation from counts (run e); the median reserved/used ratio of the
#    planned reservations is printed and must be <= 2;
#  - crash consistency: a run of 3 transactions stopped after each of its
#    write requests leaves an image that btrfs check accepts and whose scratch
#    tree equals the state after some commit (never earlier than a previous
#    crash point), and a rerun from there works.
# ENOSPC (exit 4: metadata groups and devices full) fails the test.
source "$(dirname "$0")/../common/lib.sh"
TT=${FSCTL_TREE_TORTURE:-$(dirname "$FSCTL")/tests/tree_torture}
[ -x "$TT" ] || skip "tree_torture not built ($TT)"

check_cmd() { echo "btrfs check --readonly '$1' > '$T/check.log' 2>&1 || { cat '$T/check.log'; exit 1; }"; }

# torture NAME IMG ARGS...: a run with btrfs check after every commit.
torture() {
  local name=$1 img=$2; shift 2
  set +e
  "$TT" "$img" --after-commit "$(check_cmd "$img")" "$@" > "$T/$name.log" 2>&1; local rc=$?
  set -e
  grep -h "^txn\|^done\|^balance" "$T/$name.log" | sed "s/^/$name: /" | tail -4
  [ $rc -ne 4 ] || fail "$name: ENOSPC (metadata block groups and devices full): $(tail -1 "$T/$name.log")"
  [ $rc -eq 0 ] || { cat "$T/$name.log"; fail "$name: tree_torture exit $rc"; }
}
max_height() { sed -n 's/.*max height \([0-9]*\);.*/\1/p' "$T/$1.log"; }
leaves_emptied() { sed -n 's/.*leaves emptied \([0-9]*\)$/\1/p' "$T/$1.log"; }
# pushes_and_merges NAME [nodes]: the final "balance:" line of the run counts
# leaf pushes and merges (and node ones, with "nodes") and height drops > 0.
pushes_and_merges() {
  local line re
  line=$(grep '^balance' "$T/$1.log")
  re="leaf pushes ([0-9]+) merges ([0-9]+) splits [0-9]+; node pushes ([0-9]+) merges ([0-9]+) .*height drops ([0-9]+)"
  [[ $line =~ $re ]] || fail "$1: no balance line"
  [ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[2]}" -gt 0 ] && [ "${BASH_REMATCH[5]}" -gt 0 ] ||
    fail "$1: no leaf push, leaf merge or height drop: $line"
  [ -z "${2:-}" ] || { [ "${BASH_REMATCH[3]}" -gt 0 ] && [ "${BASH_REMATCH[4]}" -gt 0 ]; } || fail "$1: no node push or node merge: $line"
}
# Flags of the FREE_SPACE_INFO of the metadata block group at $2.
fsi_flags() { btrfs inspect-internal dump-tree -t 10 "$1" | sed -n "/key ($2 FREE_SPACE_INFO/{n;s/.*flags \([0-9]*\).*/\1/p}"; }
metadata_bg() { btrfs inspect-internal dump-tree -t 2 "$1" | awk '/BLOCK_GROUP_ITEM/ {k=$4; sub(/\(/,"",k)} /flags METADATA/ && k && !done {print k; done=1}'; }

# A: 4K nodes, crc32c, DUP metadata: height >= 3, emptied leaves, collapse.
mkimg "$T/a.img" 256M -n 4096 -m dup --csum crc32c
torture a "$T/a.img" --seed 101 --transactions 18 --ops 1500 --mix phases
[ "$(max_height a)" -ge 3 ] || fail "a: tree never reached height 3"
[ "$(leaves_emptied a)" -gt 0 ] || fail "a: no leaf was emptied"
pushes_and_merges a nodes

# B: 16K nodes, xxhash, single metadata (8 MiB: 200 operations a transaction).
mkimg "$T/b.img" 256M -n 16384 -m single --csum xxhash
torture b "$T/b.img" --seed 202 --transactions 16 --ops 200 --mix phases
[ "$(max_height b)" -ge 2 ] || fail "b: tree never split"
[ "$(leaves_emptied b)" -gt 0 ] || fail "b: no leaf was emptied"
pushes_and_merges b

# C: 4K nodes, sha256, single metadata whose free space is in bitmaps: the
# kernel converts a block group's free space to bitmaps when it has more
# extents than fit the bitmaps' size (here > 11 for 8 MiB, and never back:
# bitmap_low_thresh is 0 below 100); many small files (inline, all
# metadata), every other one deleted, fragment it.
mkimg "$T/c.img" 256M -n 4096 -m single --csum sha256
bitmaps=no
if [ "$(id -u)" -eq 0 ] && mkdir -p "$T/mnt" && mount -o loop "$T/c.img" "$T/mnt" 2>/dev/null; then
  mkdir "$T/mnt/d"
  for i in $(seq 1 4000); do echo "small file $i" > "$T/mnt/d/f$i"; done
  sync
  for i in $(seq 1 2 4000); do rm "$T/mnt/d/f$i"; done
  umount "$T/mnt"
  bg=$(metadata_bg "$T/c.img")
  [ "$(fsi_flags "$T/c.img" "$bg")" = 1 ] && bitmaps=yes
  [ $bitmaps = yes ] || echo "NOTE: the kernel did not convert metadata block group $bg to bitmaps"
else
  echo "NOTE: mount -o loop not available: image c keeps the extent form (bitmap part not exercised)"
fi
torture c "$T/c.img" --seed 303 --transactions 12 --ops 300 --mix phases
[ "$(max_height c)" -ge 3 ] || fail "c: tree never reached height 3"
pushes_and_merges c
if [ $bitmaps = yes ]; then
  [ "$(fsi_flags "$T/c.img" "$bg")" = 1 ] || fail "c: metadata block group $bg left the bitmap form"
  echo "c: metadata block group $bg stayed in bitmap form through $(grep -c '^txn' "$T/c.log") commits"
fi

# D: 16K nodes, blake2, DUP metadata (1 GiB image: 51 MiB of it), items of
# a fifth to a third of a leaf: over 493 leaves, so 16K nodes push and merge.
mkimg "$T/d.img" 1G -n 16384 -m dup --csum blake2
torture d "$T/d.img" --seed 404 --transactions 12 --ops 1500 --mix phases --sizes large
[ "$(max_height d)" -ge 3 ] || fail "d: tree never reached height 3"
pushes_and_merges d nodes

# E: the reservation from counts (no plan) must stay an upper bound with
# pushes and merges too (4K, DUP, as a).
mkimg "$T/e.img" 256M -n 4096 -m dup --csum crc32c
torture e "$T/e.img" --seed 505 --transactions 12 --ops 1000 --mix phases --reserve counts

# F: free-space bitmap conversion by our own commit. --own-chunk: the first
# transaction allocates a metadata chunk (256 MiB on a 3 GiB device: 10% of
# it, at most 256 MiB) and the run places every block there. --mix fragment:
# txn 1 appends 900 items of the maximum size (900 leaves in a row), txn 2
# deletes every other one (about 450 one-leaf holes), txn 3 the rest. The
# after-commit command also saves the free space tree of every commit.
mkimg "$T/f.img" 3G -n 4096 -m single --csum crc32c
echo 0 > "$T/f.n"
f_after="$(check_cmd "$T/f.img"); n=\$(( \$(cat '$T/f.n') + 1 )); echo \$n > '$T/f.n'; btrfs inspect-internal dump-tree -t 10 '$T/f.img' > '$T/f.fst.'\$n"
set +e
"$TT" "$T/f.img" --after-commit "$f_after" --seed 606 --transactions 3 --ops 900 --mix fragment --own-chunk > "$T/f.log" 2>&1; rc=$?
set -e
grep -h "^own\|^txn" "$T/f.log" | sed "s/^/f: /"
[ $rc -eq 0 ] || { cat "$T/f.log"; fail "f: tree_torture exit $rc"; }
[ "$(cat "$T/f.n")" -eq 3 ] || fail "f: $(cat "$T/f.n") commits checked, expect 3"
read -r fbg flen < <(sed -n 's/^own chunk \([0-9]*\) length \([0-9]*\)$/\1 \2/p' "$T/f.log") || true
[ "${flen:-0}" -eq 268435456 ] || fail "f: the run's chunk is ${flen:-missing} bytes, expect 256 MiB"
# The kernel's thresholds (free-space-tree.c set_free_space_tree_thresholds):
# a bitmap covers sectorsize * 2048 bytes and costs 25 + 256 bytes with its
# item header; above high = bitmaps' bytes / 25 extents, bitmaps; below high
# - 100 (when high > 100), extents again.
ss=$(btrfs inspect-internal dump-super "$T/f.img" | sed -n 's/^sectorsize[[:space:]]*\([0-9]*\)$/\1/p')
nbitmaps=$(( (flen + ss * 2048 - 1) / (ss * 2048) ))
high=$(( nbitmaps * 281 / 25 )); low=$(( high > 100 ? high - 100 : 0 ))
[ "$high" -eq 359 ] && [ "$low" -eq 259 ] && [ "$nbitmaps" -eq 32 ] || fail "f: thresholds $high/$low, $nbitmaps bitmaps; expect 359/259, 32"
# fst_info N: "extent_count flags" of the group's FREE_SPACE_INFO after commit N;
# fst_items N TYPE: how many TYPE items lie in the group after commit N.
fst_info() { sed -n "/item [0-9]* key ($fbg FREE_SPACE_INFO $flen)/{n;s/.*extent count \([0-9]*\) flags \([0-9]*\).*/\1 \2/p}" "$T/f.fst.$1"; }
fst_items() {
  awk -v a="$fbg" -v b="$((fbg + flen))" -v t="$2" '
    $1 == "item" && $3 == "key" { o = $4; sub(/\(/, "", o); if ($5 == t && o + 0 >= a && o + 0 < b) n++ }
    END { print n + 0 }' "$T/f.fst.$1"
}
for n in 1 2 3; do
  cnt=; flags=
  read -r cnt flags < <(fst_info $n) || true
  [ -n "$flags" ] || fail "f: no FREE_SPACE_INFO ($fbg FREE_SPACE_INFO $flen) after commit $n"
  echo "f: after commit $n: extent_count $cnt flags $flags, $(fst_items $n FREE_SPACE_BITMAP) bitmap items, $(fst_items $n FREE_SPACE_EXTENT) extent items (thresholds $high/$low)"
  eval "cnt$n=$cnt flags$n=$flags"
done
[ "$flags1" -eq 0 ] && [ "$(fst_items 1 FREE_SPACE_BITMAP)" -eq 0 ] || fail "f: commit 1 left the group in bitmap form"
[ "$cnt2" -gt "$high" ] || fail "f: the holes made $cnt2 free extents, not above bitmap_high_thresh $high"
[ "$flags2" -eq 1 ] || fail "f: $cnt2 free extents (> $high) but USING_BITMAPS not set"
[ "$(fst_items 2 FREE_SPACE_BITMAP)" -eq "$nbitmaps" ] || fail "f: $(fst_items 2 FREE_SPACE_BITMAP) bitmap items, expect $nbitmaps"
[ "$(fst_items 2 FREE_SPACE_EXTENT)" -eq 0 ] || fail "f: extent items left beside the bitmaps"
[ "$cnt3" -lt "$low" ] || fail "f: clearing left $cnt3 free extents, not below bitmap_low_thresh $low"
[ "$flags3" -eq 0 ] || fail "f: $cnt3 free extents (< $low) but USING_BITMAPS still set"
[ "$(fst_items 3 FREE_SPACE_BITMAP)" -eq 0 ] || fail "f: bitmap items left after converting back"
[ "$(fst_items 3 FREE_SPACE_EXTENT)" -eq "$cnt3" ] || fail "f: $(fst_items 3 FREE_SPACE_EXTENT) extent items, extent_count $cnt3"
# The kernel takes the result: read-write mount, a file written, unmounted,
# btrfs check clean.
if [ "$(id -u)" -eq 0 ] && mkdir -p "$T/mnt" && mount -o loop "$T/f.img" "$T/mnt" 2>/dev/null; then
  head -c 1048576 /dev/urandom > "$T/mnt/after-conversion"
  sync
  umount "$T/mnt"
  btrfs check --readonly "$T/f.img" > "$T/check.log" 2>&1 || { cat "$T/check.log"; fail "f: btrfs check after the kernel's mount"; }
  echo "f: the kernel mounted the converted image read-write and wrote to it; btrfs check clean"
else
  echo "NOTE: mount -o loop not available: the kernel's mount of image f not exercised"
fi

# Reservation: the tool fails when used > reserved; the median ratio of the
# planned reservations must be <= 2 (the counts of run e are only printed).
ratios() {
  python3 -c '
import sys, statistics
name, limit = sys.argv[1], float(sys.argv[2])
r = [(int(l.split()[5]), int(l.split()[7])) for l in sys.stdin if l.startswith("txn")]
assert all(u <= s for s, u in r), "used > reserved"
ratios = [s / u for s, u in r if u]
m = statistics.median(ratios)
print("reservation (%s): %d transactions, used <= reserved in all, reserved/used median %.2f min %.2f max %.2f" %
      (name, len(r), m, min(ratios), max(ratios)))
assert m <= limit, "median reserved/used %.2f > %.2f" % (m, limit)' "$@"
}
cat "$T/a.log" "$T/b.log" "$T/c.log" "$T/d.log" | ratios planned 2.0 || fail "planned reservations: median ratio above 2 or used > reserved"
ratios counts 1000 < "$T/e.log" || fail "reservations from counts: used > reserved"

# Crash consistency: a populated tree (height 2), then 3 transactions of 40
# operations; crash after each write request of the latter.
mkimg "$T/base.img" 256M -n 4096 -m dup --csum crc32c
"$TT" "$T/base.img" -q --seed 7 --transactions 2 --ops 150 --mix grow >/dev/null || fail "crash base run"
cp --sparse=always "$T/base.img" "$T/ref.img"
CRASH_ARGS=(--seed 8 --transactions 3 --ops 40 --mix churn)
FSCTL_FAIL_AFTER_WRITES=1000000000 "$TT" "$T/ref.img" "${CRASH_ARGS[@]}" --snapshots "$T/snap" > "$T/ref.log" || fail "crash reference run"
W=$(grep "^txn 3 " "$T/ref.log" | sed 's/.*writes \([0-9]*\)$/\1/')
[ "${W:-0}" -gt 3 ] || fail "reference run counted ${W:-no} write requests"
last=0
for n in $(seq 1 "$W"); do
  cp --sparse=always "$T/base.img" "$T/c.img"
  set +e
  FSCTL_FAIL_AFTER_WRITES=$n "$TT" "$T/c.img" "${CRASH_ARGS[@]}" > "$T/crash.log" 2>&1; rc=$?
  set -e
  [ $rc -eq 86 ] || { cat "$T/crash.log"; fail "crash at write $n: exit $rc, expect the fail point's 86"; }
  btrfs check --readonly "$T/c.img" > "$T/check.log" 2>&1 || { cat "$T/check.log"; fail "crash at write $n: btrfs check fails"; }
  "$TT" "$T/c.img" --dump "$T/dump" || fail "crash at write $n: cannot read the scratch tree"
  state=
  for s in 0 1 2 3; do cmp -s "$T/dump" "$T/snap.$s" && state=$s; done
  [ -n "$state" ] || fail "crash at write $n: the scratch tree equals no commit's state"
  [ "$state" -ge "$last" ] || fail "crash at write $n: state $state is older than state $last of an earlier crash point"
  last=$state
  "$TT" "$T/c.img" -q --seed $((1000 + n)) --transactions 1 --ops 30 --after-commit "$(check_cmd "$T/c.img")" > "$T/rerun.log" 2>&1 ||
    { cat "$T/rerun.log"; fail "crash at write $n: rerun from state $state failed"; }
done
[ "$last" -eq 3 ] || fail "the last crash point is state $last, expect the final commit 3"
echo "crash: $W write requests, each a crash point: btrfs check clean, state = a commit's, rerun works"
