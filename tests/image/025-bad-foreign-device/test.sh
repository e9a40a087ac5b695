#!/usr/bin/env bash
# 025-bad-foreign-device: a device of another filesystem given together with
# the right one(s). Proves: one "ERROR: " line naming the foreign device and
# both fsids (not a confusing "devid given twice": single-device
# filesystems all have devid 1), exit 2 (wrong command line), images unchanged.
# Cases: two single-device filesystems; devid 2 of another 2-device
# filesystem in place of the right devid 2.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
mkimg "$T/a.img" 256M
mkimg "$T/b.img" 256M
fsid() { btrfs inspect-internal dump-super "$1" | awk '$1=="fsid"{print $2}'; }
snap "$T/a.img" "$T/b.img"
for cmd in tree-stats block-groups dump-tree; do
  expect 2 "$FSCTL" inspect $cmd "$T/a.img" "$T/b.img"
  says "$T/b.img" "belongs to filesystem $(fsid "$T/b.img")" "not $(fsid "$T/a.img")"
done
unchanged "$T/a.img" "$T/b.img"

for f in d1 d2 o1 o2; do rm -f "$T/$f.img"; truncate -s 256M "$T/$f.img"; done
mkfs.btrfs -q -f -m raid1 -d raid1 "$T/d1.img" "$T/d2.img" >/dev/null
mkfs.btrfs -q -f -m raid1 -d raid1 "$T/o1.img" "$T/o2.img" >/dev/null
snap "$T/d1.img" "$T/o2.img"
expect 2 "$FSCTL" inspect tree-stats "$T/d1.img" "$T/o2.img"
says "$T/o2.img" "belongs to filesystem $(fsid "$T/o2.img")" "not $(fsid "$T/d1.img")"
expect 2 "$FSCTL" inspect block-groups "$T/o2.img" "$T/d1.img"
says "$T/d1.img" "belongs to filesystem $(fsid "$T/d1.img")"
unchanged "$T/d1.img" "$T/o2.img"
expect 0 "$FSCTL" inspect tree-stats "$T/d1.img" "$T/d2.img"
