#!/usr/bin/env bash
# 027-bad-mounted: the image is mounted (mount -o loop). Proves: read-only
# inspect commands warn "device is mounted on <mount point>" naming the
# image, still work (exit 0), and change nothing. Write commands do not
# exist yet; when they do they must refuse with exit 5 (add that here).
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_mount
img="$T/m.img"; mnt="$T/mnt"
mkimg "$img" 256M
mkdir -p "$mnt"
mount -o loop "$img" "$mnt" || skip "mount -o loop failed"
trap 'umount "$mnt" 2>/dev/null || true' EXIT
echo hello > "$mnt/file"; sync
for cmd in tree-stats block-groups dump-super "dump-tree -t root"; do
  expect 0 "$FSCTL" inspect $cmd "$img"
  warns "$img: device is mounted on $mnt"
done
# Through the loop device too.
loopdev=$(losetup -j "$img" | cut -d: -f1 | head -1)
if [ -n "$loopdev" ]; then
  expect 0 "$FSCTL" inspect block-groups "$loopdev"
  warns "$loopdev: device is mounted on $mnt"
fi
umount "$mnt"; trap - EXIT
snap "$img"
expect 0 "$FSCTL" inspect tree-stats "$img"
grep -q "mounted" "$T/stderr" && fail "warning after unmount: $(cat "$T/stderr")"
unchanged "$img"
