#!/usr/bin/env bash
# 093-balance-fixtures: `fsctl balance -m` on every image of ../shared/fixtures
# that fsctl writes to (skinny metadata and a valid free space tree):
# basic (4K dup, reflinks, hardlinks, compression), manybg (106 block groups),
# the three quota images, raid1 on 2 devices, sha256 csums, and the
# qgroup-corrupt image; mixed-bg is a refusal (exit 4, unchanged) and the v1
# space cache image too. After the balance: every original metadata and
# system block group is gone, btrfs check --readonly passes (for the corrupt
# image: says exactly what it said before, the one edited qgroup), qgroup
# verify gives the same verdict and numbers as before (exact on the quota
# images, the corrupt one still reported — balance does not repair), and
# (where mount works) the kernel mounts it rw, every file has the sha256 of
# the fixture JSON, new files can be written, and btrfs check still passes.
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/060-convert-fresh/cvlib.sh"
source "$(dirname "$0")/../common/balance_check.sh"
need_root
FX=$SHARED/fixtures
[ -f "$FX/MANIFEST.json" ] || skip "no fixtures at $FX (they live beside the repo in ../shared)"
MOUNT=1
( need_mount ) > /dev/null 2>&1 || { MOUNT=0; echo "NOTE: mount -o loop unavailable: kernel mount parts skipped"; }

qv() {  # every qgroup's status and numbers, as JSON lines
  local rc=0
  "$FSCTL" qgroup verify --format json "${devs[@]}" > "$T/qv.json" || rc=$?
  python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["qgroups"]:
    print(r["qgroupid"], r["status"], r["computed"], r.get("ondisk"))' "$T/qv.json"
  return $rc
}

ran=0
for name in basic-4k-crc32c-dup manybg-4k-single-1g quota-16k-xxhash-dup quota-4k-crc32c-single quota-64k-blake2-dup \
            raid1-2dev-16k-xxhash sha256-4k-single-zstdforce quota-4k-crc32c-single-corrupt mixed-bg-4k-crc32c \
            spacecache-v1-16k-crc32c; do
  [ -f "$FX/$name.json" ] || { echo "NOTE: $name absent"; continue; }
  t0=$SECONDS
  fixture_devs "$FX" "$name"
  case $name in
    mixed-bg-*|spacecache-v1-*)
      before=$(img_sum "${devs[@]}")
      set +e
      "$FSCTL" balance -m "${devs[@]}" > "$T/out" 2> "$T/err"; rc=$?
      set -e
      [ $rc -eq 4 ] || { cat "$T/err"; fail "$name: exit $rc, expect 4 (refused)"; }
      [ "$(img_sum "${devs[@]}")" = "$before" ] || fail "$name: the refused balance changed the image"
      echo "$name: refused as expected: $(head -1 "$T/err")"
      ran=$((ran + 1)); cv_cleanup; CV_LOOPS=(); rm -f "$T/$name"*.img
      continue ;;
  esac
  checkref=""
  if ! btrfs check --readonly "${devs[0]}" > "$T/check.ref" 2>&1; then
    grep -q "are different" "$T/check.ref" || { tail "$T/check.ref"; fail "$name: btrfs check fails on the fixture as shipped"; }
    checkref=$T/check.ref
  fi
  quota=$(python3 -c 'import json,sys; print(1 if (json.load(open(sys.argv[1])).get("quota") or {}).get("enabled") else 0)' "$FX/$name.json")
  qrc=0
  [ "$quota" = 1 ] && { qv > "$T/qv.ref" || qrc=$?; }
  bgjson "$T/bg.0" "${devs[@]}"
  metadata_starts "$T/bg.0" > "$T/old"

  rc=0
  "$FSCTL" --format json balance -m "${devs[@]}" > "$T/bal.json" 2> "$T/bal.err" || rc=$?
  # Exit 1 is "qgroups differ after the balance": right for the corrupt image
  # (balance keeps numbers as they are), wrong anywhere else.
  want=0; [ -n "$checkref" ] && want=1
  [ $rc -eq $want ] || { cat "$T/bal.err" "$T/bal.json"; fail "$name: balance exit $rc, expect $want"; }
  bgjson "$T/bg.1" "${devs[@]}"
  python3 - "$T/bg.1" "$T/old" <<'PY' || fail "$name: an original metadata/system block group is still there"
import json, sys
now = {b["start"] for b in json.load(open(sys.argv[1]))["block_groups"]}
old = {int(x) for x in open(sys.argv[2]).read().split()}
assert not (now & old), sorted(now & old)
PY
  if [ -z "$checkref" ]; then
    check_clean "$name after balance" "${devs[0]}"
  else
    btrfs check --readonly "${devs[0]}" > "$T/check.out" 2>&1 && fail "$name: btrfs check passes on an image it failed before"
    diff <(grep -E "ERROR|are different" "$checkref") <(grep -E "ERROR|are different" "$T/check.out") > /dev/null ||
      { diff "$checkref" "$T/check.out" | head -20; fail "$name: btrfs check says something else than before"; }
  fi
  if [ "$quota" = 1 ]; then
    rc=0; qv > "$T/qv.out" || rc=$?
    [ $rc -eq $qrc ] || fail "$name: qgroup verify exit $rc, before $qrc"
    diff "$T/qv.ref" "$T/qv.out" > /dev/null || { diff "$T/qv.ref" "$T/qv.out" | head; fail "$name: qgroup numbers changed"; }
  fi
  if [ "$MOUNT" = 1 ]; then
    mount_fs "$T/mnt" "${mountdev[@]}" || fail "$name: the kernel does not mount it after the balance"
    $CVTOOL files-json "$FX/$name.json" "$T/mnt" > "$T/files.out" || { cat "$T/files.out"; fail "$name: files differ after the balance"; }
    write_more "$T/mnt" balance
    umount "$T/mnt"
    if [ -z "$checkref" ]; then check_clean "$name after balance and a kernel rw mount" "${devs[0]}"; fi
  fi
  echo "$name: $(wc -l < "$T/old") metadata/system block groups relocated: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%d extents, %d backrefs remapped, %d commits, %.3f s" % (r["relocated_extents"], r["backrefs_remapped"], r["commits"], r["seconds"]))' "$T/bal.json")$([ "$MOUNT" = 1 ] && echo "; mount, sha256 of $(grep -o '^[0-9]*' "$T/files.out") files, writes ok") ($((SECONDS - t0)) s)"
  ran=$((ran + 1))
  cv_cleanup; CV_LOOPS=()
  rm -f "$T/$name"*.img
done
[ "$ran" -gt 0 ] || skip "no fixture image found in $FX"
echo ok
