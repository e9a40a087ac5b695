#!/usr/bin/env bash
# 028-bad-missing-device: one device of a 2-device (raid1) filesystem given
# alone. Proves: one "ERROR: " line naming the given device, the missing
# devid and its device uuid (as dump-super of the missing device shows it),
# exit 3, images unchanged; both devices together open fine.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
for f in d1 d2; do rm -f "$T/$f.img"; truncate -s 256M "$T/$f.img"; done
mkfs.btrfs -q -f -m raid1 -d raid1 "$T/d1.img" "$T/d2.img" >/dev/null
devuuid() { btrfs inspect-internal dump-super "$1" | awk '$1=="dev_item.uuid"{print $2}'; }
snap "$T/d1.img" "$T/d2.img"
for cmd in tree-stats block-groups dump-tree; do
  expect 3 "$FSCTL" inspect $cmd "$T/d1.img"
  says "$T/d1.img" "missing device devid 2 uuid $(devuuid "$T/d2.img")"
  expect 3 "$FSCTL" inspect $cmd "$T/d2.img"
  says "$T/d2.img" "missing device devid 1 uuid $(devuuid "$T/d1.img")"
done
expect 0 "$FSCTL" inspect tree-stats "$T/d2.img" "$T/d1.img"
# The same device twice is not a substitute for the missing one.
expect 2 "$FSCTL" inspect tree-stats "$T/d1.img" "$T/d1.img"
says "$T/d1.img" "devid 1 given twice"
unchanged "$T/d1.img" "$T/d2.img"
