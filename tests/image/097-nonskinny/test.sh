#!/usr/bin/env bash
# 097-nonskinny: every write job on filesystems without skinny metadata
# (`mkfs.btrfs -O ^skinny-metadata`: tree block extent items are
# EXTENT_ITEMs of nodesize with btrfs_tree_block_info) and on mixed ones (the
# same after `btrfstune -x` and more writes through a mount: old items for
# the old blocks, METADATA_ITEMs for new ones); issue 12. Non-skinny at
# nodesize 4K, 16K and 64K, mixed at 4K: the node size changes the leaf
# layout, the kind changes the item forms, and the two are independent, so
# each is met without the whole product (the 16K and 64K mixed images cost
# 57 s of CI, 157 s against 100 s; NS097_CASES="mixed:16384 ..." runs others). Kernel-made content through a loop mount: quota, a subvolume, two
# snapshots, files changed in the subvolume after them (FULL_BACKREF blocks),
# a level-1 qgroup, `quota rescan -w`. Jobs, one after another on the same
# image: qgroup verify --repair of an edited QGROUP_INFO, convert --bg-tree,
# convert --no-bg-tree, balance -mconvert=dup (the image has single
# metadata), at 4K balance -musage=90,limit=1, then balance -m. After each
# job: btrfs check --readonly --qgroup-report clean (Debian's, and
# /var/tmp/btrfs-progs-ref/btrfs when present), fsctl qgroup verify exit 0,
# the item forms expected (non-skinny: no METADATA_ITEM ever; mixed:
# subvolume blocks keep their old-form items; the new block group tree root
# gets the superblock's form), the kernel mounts it read-write, every file's
# sha256 is unchanged and the kernel's qgroup numbers after `btrfs quota
# rescan -w` are the ones on disk before the jobs. Every balance -m remapped
# full backrefs. On the 16K non-skinny image, convert --bg-tree is also
# stopped after every write request (on a copy): btrfs check accepts each
# state and a rerun finishes (invariant 3).
source "$(dirname "$0")/../common/lib.sh"
need_mount
EDIT="python3 $FSCTL_SRC/tests/image/common/btrfs_edit.py"
REF=/var/tmp/btrfs-progs-ref/btrfs
MOUNTS=()
trap 'release_all "${MOUNTS[@]}" --' EXIT

# make_image IMG NODESIZE mixed|old
make_image() {
  local img=$1 ns=$2 kind=$3 m="$T/mk" i id
  mkimg "$img" 320M -n "$ns" -m single -O ^skinny-metadata
  mkdir -p "$m"
  mount -o loop,noatime "$img" "$m"
  MOUNTS+=("$m")
  btrfs quota enable "$m"
  btrfs subvolume create "$m/sv" > /dev/null
  mkdir "$m/sv/d"
  for i in $(seq 1 150); do head -c $((i * 211 % 9000 + 1)) /dev/urandom > "$m/sv/d/f$i"; done
  btrfs subvolume snapshot "$m/sv" "$m/snap1" > /dev/null
  btrfs subvolume snapshot "$m/sv" "$m/snap2" > /dev/null
  for i in $(seq 1 7 150); do echo "changed in sv" >> "$m/sv/d/f$i"; done
  btrfs qgroup create 1/100 "$m"
  for s in sv snap1; do
    id=$(btrfs inspect-internal rootid "$m/$s")
    btrfs qgroup assign "0/$id" 1/100 "$m" > /dev/null 2>&1 || true
    btrfs quota rescan -W "$m" > /dev/null 2>&1 || true
  done
  btrfs quota rescan -w "$m" > /dev/null
  umount "$m"
  if [ "$kind" = mixed ]; then
    btrfstune -x "$img"
    mount -o loop,noatime "$img" "$m"
    for i in $(seq 1 40); do head -c $((i * 307 % 7000 + 1)) /dev/urandom > "$m/snap2/d/new$i"; done
    for i in $(seq 2 9 150); do echo "changed after btrfstune -x" >> "$m/sv/d/f$i"; done
    btrfs subvolume snapshot "$m/snap2" "$m/snap3" > /dev/null
    btrfs quota rescan -w "$m" > /dev/null
    umount "$m"
  fi
}

# forms IMG: "OLD_SUBVOL OLD_ALL SKINNY" counts of tree block extent items:
# old form (EXTENT_ITEM with TREE_BLOCK) of subvolume-tree blocks (a
# TREE_BLOCK_REF of tree 5 or >= 256, or a SHARED_BLOCK_REF), old form of
# every tree, METADATA_ITEMs.
forms() {
  "$FSCTL" --format json inspect dump-tree -t extent "$1" | python3 -c '
import json, sys
old_sub = old = skinny = 0
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        t = it["key"]["type_name"]
        if t == "METADATA_ITEM":
            skinny += 1
        elif t == "EXTENT_ITEM" and it["data"]["flags"] & 2:
            old += 1
            refs = it["data"].get("inline_refs", [])
            if any(r.get("root", 0) == 5 or r.get("root", 0) >= 256 or "parent" in r for r in refs):
                old_sub += 1
print(old_sub, old, skinny)'
}

# state DIR OUT: every file's sha256 under mount DIR.
state() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) > "$2.files"; }
# ondisk_qgroups IMG OUT: the qgroup numbers on disk, "qgroupid rfer excl".
ondisk_qgroups() {
  "$FSCTL" --format json qgroup show "$1" | python3 -c '
import json, sys
for q in json.load(sys.stdin)["qgroups"]:
    print(q["qgroupid"], q["referenced"], q["exclusive"])' | sort > "$2.qgroups"
}
# kernel_state IMG OUT: one read-write kernel mount: the files' sha256, then
# the kernel's qgroup numbers after its own rescan.
kernel_state() {
  local m="$T/rw"
  mkdir -p "$m"
  mount -o loop,noatime "$1" "$m"
  MOUNTS+=("$m")
  state "$m" "$2"
  btrfs quota rescan -w "$m" > /dev/null
  btrfs qgroup show --raw "$m" | awk '$1 ~ /^[0-9]+\// { print $1, $2, $3 }' | sort > "$2.kernel"
  umount "$m"
}

check_clean() {  # IMG NAME
  local rc c
  for c in btrfs "$REF"; do
    [ -x "$(command -v "$c")" ] || continue
    set +e
    "$CHECK_RETRY" "$c" check --readonly --qgroup-report "$1" > "$T/$2.check" 2>&1; rc=$?
    set -e
    [ $rc -eq 0 ] && ! grep -q "are different\|ERROR\|error" "$T/$2.check" ||
      { tail -20 "$T/$2.check"; fail "$2: $c check --readonly exit $rc"; }
  done
}

# after_job IMG NAME KIND BEFORE: the checks every job must pass.
after_job() {
  local img=$1 name=$2 kind=$3 before=$4
  check_clean "$img" "$name"
  "$FSCTL" qgroup verify "$img" > "$T/$name.verify" || { tail -5 "$T/$name.verify"; fail "$name: fsctl qgroup verify"; }
  read -r old_sub old skinny < <(forms "$img")
  if [ "$kind" = old ]; then
    [ "$skinny" -eq 0 ] || fail "$name: $skinny METADATA_ITEMs on a filesystem without skinny metadata"
  else
    [ "$old_sub" -eq "$OLD_SUB" ] || fail "$name: subvolume blocks with an old-form item: $old_sub, expect $OLD_SUB (kept)"
  fi
  ondisk_qgroups "$img" "$T/$name"
  diff "$before.qgroups" "$T/$name.qgroups" || fail "$name: on-disk qgroups changed"
  # The kernel mounts it read-write; the files are unchanged and its own
  # rescan gives the numbers that were on disk before the jobs.
  kernel_state "$img" "$T/$name"
  diff "$before.files" "$T/$name.files" > /dev/null || fail "$name: file contents changed"
  diff "$before.qgroups" "$T/$name.kernel" || fail "$name: the kernel's rescan differs from the on-disk numbers before the jobs"
  grep -q "^1/100 " "$T/$name.kernel" || fail "$name: qgroup 1/100 gone"
  echo "$name: ok (forms: $old_sub subvolume / $old old-form items, $skinny METADATA_ITEMs)"
}

# crash_convert IMG: convert --bg-tree on a copy, stopped after every write
# request (the fail point): btrfs check accepts what is left (new items in
# the old form included) and a rerun finishes; on the copy only.
crash_convert() {
  local n=1 rc
  while :; do
    cp --sparse=always "$1" "$T/crash.img"
    set +e
    FSCTL_FAIL_AFTER_WRITES=$n "$FSCTL" -q convert --bg-tree "$T/crash.img" > /dev/null 2>&1; rc=$?
    set -e
    [ $rc -eq 0 ] && break
    [ $rc -eq 86 ] || fail "crash run $n: exit $rc, expect the fail point's 86"
    btrfs check --readonly "$T/crash.img" > "$T/crash.check" 2>&1 || { tail -5 "$T/crash.check"; fail "after a crash at write $n btrfs check fails"; }
    "$FSCTL" -q convert --bg-tree "$T/crash.img" > /dev/null || fail "rerun after the crash at write $n failed"
    btrfs check --readonly "$T/crash.img" > "$T/crash.check" 2>&1 || { tail -5 "$T/crash.check"; fail "after the crash at write $n and a rerun btrfs check fails"; }
    n=$((n + 1))
    [ $n -lt 100 ] || fail "convert never finished"
  done
  rm -f "$T/crash.img"
  echo "convert --bg-tree without skinny metadata: a crash after each of its $((n - 1)) write requests checked"
}

run() {  # NAME CMD...: a job that must exit 0
  local name=$1
  shift
  "$@" > "$T/$name.out" 2> "$T/$name.err" || { tail -20 "$T/$name.out" "$T/$name.err"; fail "$name: exit $?"; }
}

for case in ${NS097_CASES:-old:4096 mixed:4096 old:16384 old:65536}; do
  kind=${case%%:*} ns=${case#*:}
  IMG="$T/$kind-$ns.img"
  N="$kind-$ns"
  make_image "$IMG" "$ns" "$kind"
  read -r OLD_SUB old skinny < <(forms "$IMG")
  [ "$OLD_SUB" -gt 0 ] || fail "$N: no old-form subvolume block items"
  if [ "$kind" = old ]; then [ "$skinny" -eq 0 ] || fail "$N: METADATA_ITEMs from mkfs -O ^skinny-metadata"
  else [ "$skinny" -gt 0 ] || fail "$N: no METADATA_ITEM after btrfstune -x and writes"; fi
  check_clean "$IMG" "$N-made"
  [ "$N" = old-16384 ] && crash_convert "$IMG"
  ondisk_qgroups "$IMG" "$T/$N-before"
  kernel_state "$IMG" "$T/$N-before"
  diff "$T/$N-before.qgroups" "$T/$N-before.kernel" || fail "$N: the kernel's rescan differs from the numbers it wrote"

  # qgroup repair of an edited QGROUP_INFO (the subvolume's referenced).
  read -r LEAF OFF RFER < <("$FSCTL" inspect dump-tree --format json -t quota "$IMG" | python3 -c '
import json, sys
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        if it["key"]["type_name"] == "QGROUP_INFO" and it["key"]["offset"] == 256:
            print(b["bytenr"], 101 + it["itemoff"], it["data"]["rfer"])')
  $EDIT setu64 "$IMG" "$LEAF" $((OFF + 8)) $((RFER + 1048576)) > /dev/null
  set +e
  "$FSCTL" qgroup verify "$IMG" > "$T/$N.damaged"; rc=$?
  set -e
  [ $rc -eq 1 ] || fail "$N: verify of the edited qgroup: exit $rc, expect 1"
  run "$N-repair" "$FSCTL" qgroup verify --repair "$IMG"
  after_job "$IMG" "$N-repair" "$kind" "$T/$N-before"

  run "$N-to-bgt" "$FSCTL" convert --bg-tree "$IMG"
  # The new block group tree's root: an item of the superblock's form.
  BGT=$("$FSCTL" --format json inspect dump-tree -t 11 "$IMG" | python3 -c 'import json,sys; print(json.load(sys.stdin)["trees"][0]["blocks"][0]["bytenr"])')
  btrfs inspect-internal dump-tree -t extent "$IMG" > "$T/$N.extent"
  if [ "$kind" = old ]; then want="($BGT EXTENT_ITEM $ns)"; else want="($BGT METADATA_ITEM 0)"; fi
  grep -qF "$want" "$T/$N.extent" || fail "$N: the block group tree root has no $want"
  after_job "$IMG" "$N-to-bgt" "$kind" "$T/$N-before"
  run "$N-from-bgt" "$FSCTL" convert --no-bg-tree "$IMG"
  after_job "$IMG" "$N-from-bgt" "$kind" "$T/$N-before"
  run "$N-dup" "$FSCTL" balance -mconvert=dup "$IMG"
  "$FSCTL" --format json inspect block-groups "$IMG" | python3 -c '
import json, sys
bgs = json.load(sys.stdin)["block_groups"]
assert all(b["flags"] & 32 for b in bgs if b["flags"] & 7 == 4), "metadata not DUP"' || fail "$N: metadata is not DUP after convert=dup"
  after_job "$IMG" "$N-dup" "$kind" "$T/$N-before"
  if [ "$ns" = 4096 ]; then  # filters select groups only; one filtered run per kind
    run "$N-filtered" "$FSCTL" balance -musage=90,limit=1 "$IMG"
    after_job "$IMG" "$N-filtered" "$kind" "$T/$N-before"
  fi
  run "$N-balance" "$FSCTL" --format json balance -m "$IMG"
  after_job "$IMG" "$N-balance" "$kind" "$T/$N-before"
  # Old-form FULL_BACKREF blocks (sv's blocks shared with its snapshots,
  # copied by the kernel) had their children's shared backrefs remapped.
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["backrefs_remapped"], r["relocated_extents"])' \
    "$T/$N-balance.out" >> "$T/remapped"
done
# Every image had shared tree blocks whose full backrefs balance remapped.
awk '$1 == 0 { bad = 1 } END { exit bad || NR == 0 }' "$T/remapped" || { cat "$T/remapped"; fail "a balance remapped no full backref"; }
echo PASS
