#!/usr/bin/env bash
# 094-balance-commit-churn: a commit whose fixed point frees, reuses and frees
# again the same new block (extent tree leaves merged and split while the
# extent items of thousands of relocated blocks move) must leave the free
# space tree right. Found on the balance bench image: a block allocated and
# marked used in the free space tree, freed, allocated again (which cancels
# the pending "free") and freed once more kept its "used" entry — btrfs check:
# "wanted bytes 65536, found 36864 ... cache appears valid but isn't". The
# image: nodesize 4K, 20,000 small files, 2 snapshots, quota; `fsctl balance
# -m` relocates its ~5,000 tree blocks in one commit; btrfs check --readonly
# must pass after it, and the kernel must mount the result.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/balance_image.sh"
need_mount
IMG="$T/churn.img"
BALANCE_IMAGE_SNAPS=2 make_balance_image "$IMG" 4096 20000
"$FSCTL" --format json balance -m "$IMG" > "$T/bal.json" || { cat "$T/bal.json"; fail "balance failed"; }
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["relocated_extents"] > 3000 and r["qgroups"]["consistent"], r' "$T/bal.json" ||
  fail "unexpected report"
set +e
btrfs check --readonly "$IMG" > "$T/check.out" 2>&1; rc=$?
set -e
[ $rc -eq 0 ] || { grep -m5 "wanted bytes\|appears valid\|ERROR\|error" "$T/check.out"; fail "btrfs check --readonly after the balance: exit $rc"; }
mkdir -p "$T/mnt"
mount -o loop "$IMG" "$T/mnt"
BI_MOUNTS+=("$T/mnt")
head -c 3000000 /dev/urandom > "$T/mnt/new"
umount "$T/mnt"
btrfs check --readonly "$IMG" > "$T/check2.out" 2>&1 || { tail "$T/check2.out"; fail "btrfs check after a kernel mount"; }
echo PASS
