#!/usr/bin/env bash
# 183-attack-balance-same-device-twice: a bug found by attack, fixed: FsInfo::open refuses a device given twice (usage error, exit 2).
# `fsctl balance -m IMG IMG` (the same device given twice, e.g. a typo for
# the second device of a 2-device filesystem) exits 5 with "device is in use
# by another writer (fsctl holds it locked); try again when it has finished"
# — the exit code of a mounted device and a message that sends the user
# waiting for a writer that does not exist. Expected: exit 2 (bad
# arguments), one ERROR line naming the image and saying it was given twice,
# nothing written.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_root

truncate -s 512M "$T/d1.img" "$T/d2.img"
mkfs.btrfs -q -f -n 4096 -m raid1 -d single "$T/d1.img" "$T/d2.img" > /dev/null
snap "$T/d1.img"
expect 2 "$FSCTL" balance -m "$T/d1.img" "$T/d1.img"
unchanged "$T/d1.img"
says "$T/d1.img" "twice"
echo "183-attack-balance-same-device-twice: ok"
