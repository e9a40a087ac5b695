#!/usr/bin/env bash
# 033-qgroup-disabled-and-bad-input:
#  - quota never enabled, and enabled then disabled: `qgroup show` exits 0 and
#    says quota is not enabled (JSON quota_enabled false); `qgroup verify`
#    exits 7 (EXIT_NO_QUOTA) with a message / quota_enabled false.
#  - a damaged quota tree block (one byte flipped in the leaf at its physical
#    location in every copy, DUP metadata, checksum now wrong): show and verify
#    exit 3 (EXIT_CORRUPT) with "ERROR: ..." naming the bytenr, no crash (this
#    runs under ASan in the sanitizer build); with only one copy damaged both
#    commands read the good mirror and succeed.
#  - a quota leaf with a valid checksum whose last QGROUP_LIMIT item is 32
#    bytes instead of 40: exit 3, an ERROR naming the leaf, no crash.
#  - the csum case on a later leaf of a multi-leaf quota tree (many-qgroups-16k,
#    7 leaves), when ../shared exists.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../039-qgroup-lib/qg.sh"
need_mount

echo "== quota disabled"
mkimg "$T/noq.img" 512M
run_rc "$T/noq.show" "$FSCTL" qgroup show "$T/noq.img"
check "never enabled: show exits 0 with a message (rc $RC)" bash -c "[ $RC -eq 0 ] && grep -q 'quota is not enabled' '$T/noq.show'"
run_rc "$T/noq.showj" "$FSCTL" --format json qgroup show "$T/noq.img"
check "never enabled: show JSON quota_enabled false, no qgroups (rc $RC)" bash -c "[ $RC -eq 0 ] && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j[\"quota_enabled\"] is False and j[\"qgroups\"]==[]' '$T/noq.showj'"
run_rc "$T/noq.verify" "$FSCTL" qgroup verify "$T/noq.img"
check "never enabled: verify exits 7 with a message (rc $RC)" bash -c "[ $RC -eq 7 ] && grep -q 'quota is not enabled' '$T/noq.verify'"
run_rc "$T/noq.verifyj" "$FSCTL" --format json qgroup verify "$T/noq.img"
check "never enabled: verify JSON quota_enabled false, exit 7 (rc $RC)" bash -c "[ $RC -eq 7 ] && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j[\"quota_enabled\"] is False' '$T/noq.verifyj'"

qg_mount "$T/noq.img" "$T/m"
btrfs quota enable "$T/m"
btrfs subvolume create "$T/m/sv" >/dev/null
head -c 1M /dev/urandom > "$T/m/sv/f"
btrfs quota rescan -w "$T/m" >/dev/null
btrfs quota disable "$T/m"
qg_umount "$T/m"
run_rc "$T/dis.show" "$FSCTL" qgroup show "$T/noq.img"
check "enabled then disabled: show exits 0 with a message (rc $RC)" bash -c "[ $RC -eq 0 ] && grep -q 'quota is not enabled' '$T/dis.show'"
run_rc "$T/dis.verify" "$FSCTL" qgroup verify "$T/noq.img"
check "enabled then disabled: verify exits 7 (rc $RC)" [ "$RC" -eq 7 ]
rm -f "$T/noq.img"

# flip_byte IMG LOGICAL OFFSET_IN_BLOCK COPIES...: xor 0x5a into the byte at
# logical+offset of each listed mirror (physical from btrfs-map-logical).
flip_byte() {
  local img=$1 logical=$2 off=$3; shift 3
  local c phys
  for c in "$@"; do
    phys=$(btrfs-map-logical -l "$logical" "$img" 2>/dev/null | awk -v c="$c" '$1=="mirror" && $2==c {print $6}')
    [ -n "$phys" ] || fail "no mirror $c for logical $logical"
    python3 - "$img" $((phys + off)) <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x5A]))
PY
  done
}
# bad_case NAME IMG LOGICAL: show and verify fail cleanly naming LOGICAL
bad_case() {
  local name=$1 img=$2 logical=$3 cmd
  for cmd in show verify; do
    run_rc "$T/$name.$cmd" "$FSCTL" qgroup "$cmd" "$img"
    echo "    $cmd: rc $RC: $(head -c 300 "$T/$name.$cmd.err" | tr '\n' ' ')"
    check "$name: $cmd exits 3 (rc $RC), ERROR naming bytenr $logical, no sanitizer report" bash -c "
      [ $RC -eq 3 ] && grep -q '^ERROR: ' '$T/$name.$cmd.err' && grep -q '$logical' '$T/$name.$cmd.err' &&
      ! grep -Eq 'AddressSanitizer|UndefinedBehaviorSanitizer|runtime error' '$T/$name.$cmd.err'"
    run_rc "$T/$name.$cmd.j" "$FSCTL" --format json qgroup "$cmd" "$img"
    check "$name: $cmd --format json also exits 3 (rc $RC)" [ "$RC" -eq 3 ]
  done
}

echo "== damaged quota tree leaf (fresh image, DUP metadata, single-leaf quota tree)"
mkimg "$T/bad.img" 512M -n 4096 -m dup
qg_mount "$T/bad.img" "$T/m"
btrfs quota enable "$T/m"
for i in 1 2 3 4 5; do btrfs subvolume create "$T/m/sv$i" >/dev/null; done
btrfs qgroup create 1/100 "$T/m"
btrfs qgroup assign 0/256 1/100 "$T/m"
btrfs quota rescan -w "$T/m" >/dev/null
qg_umount "$T/m"
btrfs inspect-internal dump-tree -t root "$T/bad.img" > "$T/root.txt"
qleaf=$(awk '/QUOTA_TREE ROOT_ITEM/{f=1} f && /bytenr/{for(i=1;i<=NF;i++) if($i=="bytenr") {print $(i+1); exit}}' "$T/root.txt")
echo "  quota tree root (a leaf) at bytenr $qleaf; mirrors: $(btrfs-map-logical -l "$qleaf" "$T/bad.img" 2>/dev/null | awk '{printf "%s ", $6}')"
cp --sparse=always "$T/bad.img" "$T/bad1.img"
flip_byte "$T/bad1.img" "$qleaf" 3000 1          # one copy: the other mirror is good
run_rc "$T/one.verify" "$FSCTL" qgroup verify "$T/bad1.img"
check "one copy damaged: verify reads the good mirror, exits 0 (rc $RC)" [ "$RC" -eq 0 ]
run_rc "$T/one.show" "$FSCTL" qgroup show "$T/bad1.img"
check "one copy damaged: show exits 0 (rc $RC)" [ "$RC" -eq 0 ]
flip_byte "$T/bad1.img" "$qleaf" 3000 2          # now every copy
bad_case "every-copy" "$T/bad1.img" "$qleaf"
rm -f "$T/bad.img" "$T/bad1.img"

echo "== valid checksum, short QGROUP_LIMIT item (last item of the leaf shrunk 40 -> 32 bytes, csum recomputed)"
mkimg "$T/short.img" 256M -n 4096 -m dup
qg_mount "$T/short.img" "$T/m"
btrfs quota enable "$T/m"
btrfs subvolume create "$T/m/sv" >/dev/null
qg_umount "$T/m"
btrfs inspect-internal dump-tree -t root "$T/short.img" > "$T/root2.txt"
sleaf=$(awk '/QUOTA_TREE ROOT_ITEM/{f=1} f && /bytenr/{for(i=1;i<=NF;i++) if($i=="bytenr") {print $(i+1); exit}}' "$T/root2.txt")
for c in 1 2; do
  phys=$(btrfs-map-logical -l "$sleaf" "$T/short.img" 2>/dev/null | awk -v c="$c" '$1=="mirror" && $2==c {print $6}')
  python3 - "$T/short.img" "$phys" "$FSCTL_SRC/tests/image/common" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[3])
from btrfs_edit import crc32c
img, phys, ns = sys.argv[1], int(sys.argv[2]), 4096
with open(img, "r+b") as f:
    f.seek(phys); blk = bytearray(f.read(ns))
    n = struct.unpack_from("<I", blk, 96)[0]
    h = 101 + 25 * (n - 1)                       # last item header
    typ = blk[h + 8]; off, size = struct.unpack_from("<II", blk, h + 17)
    assert typ == 244 and size == 40, (typ, size)   # QGROUP_LIMIT
    struct.pack_into("<II", blk, h + 17, off + 8, size - 8)
    blk[0:32] = struct.pack("<I", crc32c(bytes(blk[32:]))) + bytes(28)
    f.seek(phys); f.write(blk)
PY
done
for cmd in show verify; do
  run_rc "$T/short.$cmd" "$FSCTL" qgroup "$cmd" "$T/short.img"
  echo "    $cmd: rc $RC: $(head -c 300 "$T/short.$cmd.err" | tr '\n' ' ')"
  check "short item: $cmd exits 3 (rc $RC), ERROR naming the leaf $sleaf, no sanitizer report" bash -c "
    [ $RC -eq 3 ] && grep -q '^ERROR: ' '$T/short.$cmd.err' && grep -q '$sleaf' '$T/short.$cmd.err' &&
    ! grep -Eq 'AddressSanitizer|UndefinedBehaviorSanitizer|runtime error' '$T/short.$cmd.err'"
done
rm -f "$T/short.img"

if [ -f "$SHARED/fixtures-bgt/many-qgroups-16k.img.zst" ]; then
  echo "== damaged later leaf of a multi-leaf quota tree (many-qgroups-16k)"
  unpack_fixture "$SHARED/fixtures-bgt/many-qgroups-16k.img.zst" "$T/mq.img"
  btrfs inspect-internal dump-tree -t quota "$T/mq.img" > "$T/mq.quota.txt"
  mapfile -t leaves < <(awk '/^leaf [0-9]+ items/{print $2}' "$T/mq.quota.txt")
  echo "  quota tree leaves: ${leaves[*]}"
  check "quota tree has several leaves" [ "${#leaves[@]}" -ge 3 ]
  victim=${leaves[3]:-${leaves[-1]}}
  ncopies=$(btrfs-map-logical -l "$victim" "$T/mq.img" 2>/dev/null | grep -c '^mirror')
  flip_byte "$T/mq.img" "$victim" 5000 $(seq 1 "$ncopies")
  bad_case "multi-leaf" "$T/mq.img" "$victim"
  rm -f "$T/mq.img"
else
  echo "SKIP (multi-leaf part): ../shared/fixtures-bgt/many-qgroups-16k not here"
fi
qg_finish
