#!/usr/bin/env bash
# 095-balance-convert: `fsctl balance -mconvert=PROFILE` changes the profile
# of metadata and system block groups offline, as btrfs balance does on a
# mounted filesystem. On a quota image (common/balance_image.sh, DUP): to
# single (needs -f: fewer copies), then back to dup; each time every metadata
# and system block group has the asked profile, the old groups are gone, and
# the full after-balance checks pass (btrfs check --qgroup-report, qgroup
# verify, qgroups/subvolumes/every file's sha256 unchanged, kernel rw mount,
# snapshot delete, write, btrfs check). On two devices: single -> raid1 with
# stripes on both devices, then `soft` leaves raid1 groups alone; btrfs
# check, the kernel mounts it with both devices and the files are unchanged.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/balance_image.sh"
source "$(dirname "$0")/../common/balance_check.sh"
need_mount

profiles_are() {  # IMG... -- PROFILE: every METADATA/SYSTEM group has it
  local want=${!#} imgs=("${@:1:$#-1}")
  "$FSCTL" --format json inspect block-groups "${imgs[@]}" > "$T/bgp.json"
  python3 - "$T/bgp.json" "$want" <<'PY'
import json, sys
want = sys.argv[2]
bad = [(b["start"], b["profile"]) for b in json.load(open(sys.argv[1]))["block_groups"] if b["flags"] & 7 in (2, 4) and b["profile"] != want]
assert not bad, "not %s: %s" % (want, bad)
PY
}

IMG="$T/conv.img"
make_balance_image "$IMG" 4096 2000
for step in "single -f" "dup"; do
  set -- $step
  prof=$1
  record_state "$IMG" "$T/before-$prof"
  metadata_starts "$T/before-$prof/block-groups.json" > "$T/old-$prof"
  # The dry run names the chunks the run will create (the whole run on a
  # copy), and the real run creates exactly those.
  "$FSCTL" balance --dry-run ${2:-} -mconvert=$prof "$IMG" > "$T/dry-$prof.out" || { cat "$T/dry-$prof.out"; fail "dry run of convert=$prof failed"; }
  grep_q -E "^  would create chunk [0-9]+ METADATA" < "$T/dry-$prof.out" || { cat "$T/dry-$prof.out"; fail "the dry run of convert=$prof lists no new chunk"; }
  "$FSCTL" --format json balance --dry-run ${2:-} -mconvert=$prof "$IMG" > "$T/dry-$prof.json"
  "$FSCTL" --format json balance ${2:-} -mconvert=$prof "$IMG" > "$T/conv-$prof.json" || { cat "$T/conv-$prof.json"; fail "convert=$prof failed"; }
  python3 - "$T/dry-$prof.json" "$T/conv-$prof.json" <<'PY' || fail "convert=$prof: the chunks created differ from the dry run's"
import json, sys
dry, real = (json.load(open(p)) for p in sys.argv[1:3])
assert dry["whole_run_simulated"], dry
assert real["chunks_created"], real
assert dry["chunks_created"] == real["chunks_created"], (dry["chunks_created"], real["chunks_created"])
PY
  profiles_are "$IMG" "$prof" || fail "after convert=$prof the profiles are not all $prof"
  balance_after_checks "$IMG" "$T/before-$prof" "$T/old-$prof" "to-$prof"
  echo "convert=$prof: ok"
done

# Two devices: single -> raid1.
D1="$T/d1.img"; D2="$T/d2.img"
truncate -s 1G "$D1" "$D2"
L1=$(losetup -f --show "$D1"); BI_LOOPS+=("$L1")
L2=$(losetup -f --show "$D2"); BI_LOOPS+=("$L2")
mkfs.btrfs -q -f -n 16384 -m single -d single "$L1" "$L2" > /dev/null
mkdir -p "$T/m2"
mount "$L1" "$T/m2"
BI_MOUNTS+=("$T/m2")
btrfs quota enable "$T/m2"
btrfs subvolume create "$T/m2/sv" > /dev/null
for i in $(seq 1 400); do head -c $((i * 53 % 9000 + 1)) /dev/urandom > "$T/m2/sv/f$i"; done
btrfs subvolume snapshot "$T/m2/sv" "$T/m2/snap" > /dev/null
echo more >> "$T/m2/sv/f7"
btrfs quota rescan -w "$T/m2" > /dev/null
(cd "$T/m2" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$T/sha2.before"
umount "$T/m2"
profiles_are "$L1" "$L2" single || fail "the 2-device image does not start single"
"$FSCTL" balance -mconvert=raid1 "$L1" "$L2" > "$T/r1.out" || { cat "$T/r1.out"; fail "convert=raid1 failed"; }
profiles_are "$L1" "$L2" raid1 || fail "after convert=raid1 the profiles are not all raid1"
"$FSCTL" --format json inspect block-groups "$L1" "$L2" > "$T/r1.json"
btrfs check --readonly "$L1" > "$T/r1.check" 2>&1 || { tail "$T/r1.check"; fail "btrfs check after convert=raid1"; }
"$FSCTL" qgroup verify "$L1" "$L2" > /dev/null || fail "qgroup verify after convert=raid1"
btrfs inspect-internal dump-tree -t chunk "$L1" | grep -A12 "type METADATA|RAID1" | grep -c "devid" > "$T/nstripes"
[ "$(cat "$T/nstripes")" -ge 2 ] || fail "raid1 metadata chunk without two stripes"
"$FSCTL" --format json balance -mconvert=raid1,soft "$L1" "$L2" > "$T/soft.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["block_groups_selected"] == 0, r' "$T/soft.json" || fail "soft relocated raid1 groups"
btrfs device scan "$L1" "$L2" > /dev/null
mount "$L1" "$T/m2"
(cd "$T/m2" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$T/sha2.after"
echo after > "$T/m2/after"
umount "$T/m2"
cmp -s "$T/sha2.before" "$T/sha2.after" || fail "files changed by convert=raid1"
btrfs check --readonly "$L1" > /dev/null 2>&1 || fail "btrfs check after the kernel mount"
echo "convert=raid1 on 2 devices: ok; soft: nothing to do"
echo PASS
