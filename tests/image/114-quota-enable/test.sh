#!/usr/bin/env bash
# 114-quota-enable: `fsctl quota enable` creates the quota tree offline
# (status ON|INCONSISTENT|RESCAN, a qgroup per subvolume) and `fsctl qgroup
# verify --repair` fills it: an offline `btrfs quota enable` + rescan. On a
# kernel-made image without quota (a subvolume with files, its snapshot with
# more, files at the top level, a subvolume deleted and cleaned):
#  - the dry run writes nothing; enable: btrfs check --readonly clean, the
#    status says inconsistent, every subvolume has a qgroup; a rerun has
#    nothing to do;
#  - verify --repair: btrfs check --readonly --qgroup-report agrees, and the
#    kernel's numbers after its own `btrfs quota rescan -w` equal the ones
#    fsctl wrote (btrfs qgroup show --raw before and after the rescan);
#  - left to the kernel instead (no repair): the kernel resumes the rescan at
#    mount and ends with the same numbers;
#  - a crash at every write request: btrfs check clean, the rerun completes.
source "$(dirname "$0")/../common/lib.sh"
need_mount
MNT="$T/mnt"
mkdir -p "$MNT"
LOOPS=()
trap 'release_all "$MNT" -- "${LOOPS[@]}"' EXIT

IMG="$T/n.img"
mksnapimg "$IMG" 150 12 noquota
mount -o loop "$IMG" "$MNT"
for i in $(seq 1 15); do head -c $((i * 3000)) /dev/urandom > "$MNT/top$i"; done
btrfs subvolume create "$MNT/gone" > /dev/null
head -c 100000 /dev/urandom > "$MNT/gone/x"
btrfs subvolume delete "$MNT/gone" > /dev/null
btrfs subvolume sync "$MNT" > /dev/null
umount "$MNT"

qshow() {  # IMG OUT: the kernel's qgroup numbers (qgroupid rfer excl), sorted
  mount -o loop "$1" "$MNT"
  btrfs qgroup show --raw "$MNT" | awk '$1 ~ /^[0-9]+\/[0-9]+$/ {print $1, $2, $3}' | sort > "$2"
  [ "${3:-}" = rescan ] && { btrfs quota rescan -w "$MNT" > /dev/null;
    btrfs qgroup show --raw "$MNT" | awk '$1 ~ /^[0-9]+\/[0-9]+$/ {print $1, $2, $3}' | sort > "$2.after"; }
  umount "$MNT"
}

before=$(img_sum "$IMG")
"$FSCTL" --format json quota enable --dry-run "$IMG" > "$T/dry.json" || fail "dry run"
[ "$(img_sum "$IMG")" = "$before" ] || fail "the dry run changed the image"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["dry_run"] and not j["wrote"] and j["qgroups_created"] == 3, j' "$T/dry.json" ||
  fail "dry run JSON (3 subvolumes: 5, sv, snap)"

cp --sparse=always "$IMG" "$T/a.img"
"$FSCTL" --format json quota enable "$T/a.img" > "$T/en.json" || fail "quota enable"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["wrote"] and j["qgroups_created"] == 3 and not j["already_enabled"], j' "$T/en.json" ||
  fail "enable JSON"
btrfs check --readonly "$T/a.img" > "$T/check.a" 2>&1 || { cat "$T/check.a"; fail "btrfs check after quota enable"; }
"$FSCTL" --format json qgroup show "$T/a.img" > "$T/show.json" || fail "qgroup show after enable"
python3 - "$T/show.json" <<'PY' || fail "qgroup show after enable"
import json, sys
j = json.load(open(sys.argv[1]))
ids = sorted(q["qgroupid"] for q in j["qgroups"])
assert ids == ["0/256", "0/257", "0/5"], ids
PY
out=$("$FSCTL" quota enable "$T/a.img") || fail "rerun"
[ "$out" = "quota is already enabled on this filesystem: nothing to do" ] || fail "rerun said: $out"

# The kernel's rescan alone (a copy before fsctl's repair).
cp --sparse=always "$T/a.img" "$T/k.img"
"$FSCTL" qgroup verify --repair "$T/a.img" > "$T/repair.out" || { cat "$T/repair.out"; fail "qgroup verify --repair after enable"; }
"$FSCTL" qgroup verify "$T/a.img" > /dev/null || fail "qgroup verify after the repair"
btrfs check --readonly --qgroup-report "$T/a.img" > "$T/check.q" 2>&1 || { cat "$T/check.q"; fail "btrfs check --qgroup-report after the repair"; }
! grep_q -i "are different\|inconsistent" < "$T/check.q" || { cat "$T/check.q"; fail "btrfs check disagrees with the repaired numbers"; }
qshow "$T/a.img" "$T/fsctl.q" rescan
[ -s "$T/fsctl.q" ] || fail "no qgroups shown by the kernel"
diff "$T/fsctl.q" "$T/fsctl.q.after" || fail "the kernel's rescan changed the numbers fsctl wrote"
mount -o loop "$T/k.img" "$MNT"
btrfs quota rescan -w "$MNT" > /dev/null 2>&1 || true
btrfs qgroup show --raw "$MNT" | awk '$1 ~ /^[0-9]+\/[0-9]+$/ {print $1, $2, $3}' | sort > "$T/kernel.q"
umount "$MNT"
diff "$T/fsctl.q" "$T/kernel.q" || fail "the kernel's own rescan after fsctl quota enable gives other numbers"
btrfs check --readonly "$T/k.img" > "$T/check.k" 2>&1 || { cat "$T/check.k"; fail "btrfs check after the kernel's rescan"; }

# A crash at every write request, then the rerun.
crash_every_write "$IMG" : quota enable
C="$T/crash.img"
echo PASS
