#!/usr/bin/env bash
# 116-balance-cancel-reloc: `fsctl balance cancel` on the crash states of a
# running kernel balance: relocation trees (ROOT_ITEMs of TREE_RELOC) and the
# BALANCE_ITEM, which the next mount would recover and resume.
# The states are made by the kernel: an image (4K nodes, quota, level-1
# qgroup, subvolume sv with 30,000 files and 4 snapshots changed after) sits
# on a scratch btrfs; while `btrfs balance start -m` runs on it, reflink
# copies of the image file are taken one after another (a clone captures
# every write completed at that instant: a power cut there). Copies holding
# relocation trees are kept (the test skips, saying so, when none did).
# For each kept state (up to 2: the first and the last):
#  - the dry run writes nothing; the run drops every relocation tree and the
#    BALANCE_ITEM: btrfs check --readonly --qgroup-report clean, no TREE_RELOC
#    ROOT_ITEM or BALANCE_ITEM left;
#  - the kernel mounts it read-write with no balance to resume (`btrfs
#    balance status`: none) and no relocation in its log, every file's
#    sha256 as before the balance, and its qgroup numbers equal the kernel's
#    after `btrfs quota rescan -w`;
# and on the first state a crash at every write (two commits at the
# default batch: the second resumes the first's drop_progress): btrfs check
# clean, the rerun completes, nothing left.
source "$(dirname "$0")/../common/lib.sh"
need_mount
MNT="$T/mnt"
SCR="$T/scratch"
mkdir -p "$MNT" "$SCR"
LOOPS=()
trap 'release_all "$MNT" "$SCR" -- "${LOOPS[@]}"' EXIT

mkimg "$T/scratch.img" 8G
mount -o loop "$T/scratch.img" "$SCR"
IMG="$SCR/t.img"
mkimg "$IMG" 1G -n 4096
mount -o loop "$IMG" "$MNT"
btrfs quota enable "$MNT"
btrfs subvolume create "$MNT/sv" > /dev/null
many_files "$MNT/sv" 30000 3000
for s in 1 2 3 4; do
  btrfs subvolume snapshot "$MNT/sv" "$MNT/snap$s" > /dev/null
  for i in $(seq 1 30); do echo "$s" > "$MNT/snap$s/f$((i * 97 + s))"; done
done
btrfs qgroup create 1/100 "$MNT"
btrfs qgroup assign --no-rescan 0/257 1/100 "$MNT" > /dev/null 2>&1 || true
btrfs qgroup assign --no-rescan 0/258 1/100 "$MNT" > /dev/null 2>&1 || true
btrfs quota rescan -w "$MNT" > /dev/null
(cd "$MNT" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$T/files.sum"
sync

# The balance, and reflink copies while it runs (the copies synchronize on
# the balance's end: the file it writes when done).
rm -f "$T/balance.done"
( btrfs balance start -m "$MNT" > "$T/balance.out" 2>&1; echo $? > "$T/balance.done" ) &
n=0
while [ ! -e "$T/balance.done" ] && [ $n -lt 600 ]; do
  cp --reflink=always "$IMG" "$SCR/c$n.img"
  n=$((n + 1))
done
wait
umount "$MNT"
# The first and the last copy holding relocation trees: searched from each
# end (a loaded machine makes hundreds of copies; dumping each cost minutes).
has_reloc() { btrfs inspect-internal dump-tree -t root "$SCR/c$1.img" 2> /dev/null | grep_q "TREE_RELOC ROOT_ITEM"; }
first=-1 last=-1
for ((i = 0; i < n; i++)); do
  if has_reloc "$i"; then first=$i; break; fi
done
if [ "$first" -ge 0 ]; then
  for ((i = n - 1; i >= first; i--)); do
    if has_reloc "$i"; then last=$i; break; fi
  done
fi
echo "$n copies during the balance ($(cat "$T/balance.out")), relocation trees first in c$first, last in c$last"
if [ "$first" -lt 0 ]; then
  skip "no copy caught the kernel with relocation trees on disk ($n copies)"
fi
pick=("$first")
[ "$last" = "$first" ] || pick+=("$last")
for i in "${pick[@]}"; do cp --sparse=always "$SCR/c$i.img" "$T/s$i.img"; done
cp --sparse=always "$SCR/c${pick[0]}.img" "$T/orig.img"
umount "$SCR"
rm -f "$T/scratch.img"

no_reloc_left() {
  ! btrfs inspect-internal dump-tree -t root "$1" | grep_q -E "TREE_RELOC ROOT_ITEM|BALANCE TEMPORARY_ITEM" ||
    fail "$2: a relocation tree or the BALANCE_ITEM is left"
}
for i in "${pick[@]}"; do
  S="$T/s$i.img"
  trees=$(btrfs inspect-internal dump-tree -t root "$S" | grep -c "key (TREE_RELOC ROOT_ITEM" || true)
  echo "state c$i: $trees relocation trees"
  before=$(img_sum "$S")
  "$FSCTL" balance cancel --dry-run "$S" > "$T/dry.out" || { cat "$T/dry.out"; fail "c$i: dry run"; }
  grep_q "^dry run: would drop the relocation trees of subvolumes" < "$T/dry.out" || { cat "$T/dry.out"; fail "c$i: dry run text"; }
  [ "$(img_sum "$S")" = "$before" ] || fail "c$i: the dry run changed the image"
  "$FSCTL" --format json balance cancel "$S" > "$T/run.json" || { cat "$T/run.json"; fail "c$i: balance cancel"; }
  python3 - "$T/run.json" <<'PY' || fail "c$i: JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["wrote"] and not j["interrupted"] and j["relocation_trees"], j
assert j["relocation_trees_dropped"] == len(j["relocation_trees"]) and j["commits"] >= 1, j
assert j["drop"]["tree_blocks_freed"] > 0, j["drop"]
PY
  btrfs check --readonly --qgroup-report "$S" > "$T/check.out" 2>&1 || { cat "$T/check.out"; fail "c$i: btrfs check"; }
  ! grep_q "are different" < "$T/check.out" || { cat "$T/check.out"; fail "c$i: btrfs check --qgroup-report"; }
  no_reloc_left "$S" "c$i"
  echo "fsctl test 116 c$i" > /dev/kmsg
  mount -o loop "$S" "$MNT"
  btrfs balance status "$MNT" 2>&1 | grep_q "No balance found" || fail "c$i: a balance is found after the cancel"
  (cd "$MNT" && sha256sum --quiet -c "$T/files.sum") || fail "c$i: file contents changed"
  btrfs qgroup show --raw "$MNT" | tail -n +3 > "$T/ours.q"
  btrfs quota rescan -w "$MNT" > /dev/null
  btrfs qgroup show --raw "$MNT" | tail -n +3 > "$T/kernel.q"
  diff "$T/kernel.q" "$T/ours.q" || fail "c$i: qgroups differ from the kernel's rescan"
  echo after > "$MNT/after"
  umount "$MNT"
  dmesg | sed -n "/fsctl test 116 c$i/,\$p" | grep -iE "relocating block group|balance: resume|merging reloc|relocation" > "$T/kmsg" || true
  [ ! -s "$T/kmsg" ] || { cat "$T/kmsg"; fail "c$i: the kernel relocated or resumed after the cancel"; }
  btrfs check --readonly "$S" > /dev/null 2>&1 || fail "c$i: btrfs check after the kernel wrote"
done

after_crash() { no_reloc_left "$1" "crash at $2"; }
crash_every_write "$T/orig.img" after_crash balance cancel
echo PASS
