#!/usr/bin/env bash
# 110-refuse-super-flags: no write command writes a filesystem whose
# superblock says it must not be written (issue 12; a data-loss fault: before
# the fix every write command went through on a seed device and broke the
# sprouts built on it). For each case every write command - convert both
# ways, its --dry-run, balance -m and its --dry-run, qgroup verify --repair,
# quota disable, quota enable, balance cancel -
# exits 4, names the flag (or the unknown bits in hex), and leaves the image
# byte-identical (lib.sh img_sum):
#  - SEEDING set by the real btrfstune -S 1;
#  - METADUMP (1<<33) and METADUMP_V2 (1<<34) as btrfs-image restores set them;
#  - unknown superblock flag bits 37 and 50, an unknown compat_ro bit (1<<20),
#    an unknown incompat bit (1<<30), printed in hex;
#  - ZONED (incompat 1<<12), named (the old message said "(0x4096)");
#  - EXTENT_TREE_V2, RAID_STRIPE_TREE, REMAP_TREE (incompat 1<<13, 14, 17), named;
#  - RAID5 and RAID6 metadata made by mkfs.btrfs (every command, named).
# Then a real seed + sprout pair made through the kernel (btrfstune -S 1, mount,
# btrfs device add, files written to the sprout): after every write command
# was refused on the seed, the sprout mounts and every file's sha256 is as
# written. Read commands still work on the seed (dump-super names SEEDING).
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/060-convert-fresh/cvlib.sh"
need_root

# refuse_all WHAT PATTERN IMG: every write command exits 4 matching PATTERN.
refuse_all() {
  local what=$1 pat=$2 img=$3 before rc args
  before=$(img_sum "$img")
  for args in "convert --bg-tree" "convert --no-bg-tree" "convert --bg-tree --dry-run" "balance -m" \
              "balance -m --dry-run" "qgroup verify --repair" "quota disable" "quota enable" "balance cancel"; do
    rc=0
    # shellcheck disable=SC2086
    "$FSCTL" $args "$img" > "$T/out" 2>&1 || rc=$?
    [ "$rc" = 4 ] || { cat "$T/out"; fail "$what: '$args' exit $rc, expect 4"; }
    grep -qE -- "$pat" "$T/out" || { cat "$T/out"; fail "$what: '$args' message does not match /$pat/"; }
    [ "$(img_sum "$img")" = "$before" ] || fail "$what: '$args' changed the image"
  done
  echo "$what: 9 write commands exit 4, image unchanged: $(head -1 "$T/out" | cut -c1-140)"
}

mkimg "$T/base.img" 256M -n 4096 -R quota
"$FSCTL" -q qgroup verify "$T/base.img" > /dev/null || fail "the base image does not verify"

cp "$T/base.img" "$T/seed.img"
btrfstune -S 1 "$T/seed.img"
refuse_all "SEEDING (btrfstune -S 1)" "seed device \(SEEDING flag\).*read-only" "$T/seed.img"
"$FSCTL" inspect dump-super "$T/seed.img" > "$T/out"
grep -qE 'flags_names.*SEEDING' "$T/out" || { cat "$T/out"; fail "dump-super does not name SEEDING"; }
"$FSCTL" -q qgroup verify "$T/seed.img" > /dev/null || fail "qgroup verify (read-only) fails on the seed"

setbits() {  # setbits SRC DEST FIELD BITS
  cp "$1" "$2"
  $CVTOOL super-set "$2" "$3" $(( $(sb_get "$2" "$3") | $4 )) > /dev/null
}
setbits "$T/base.img" "$T/x.img" flags $((1 << 33)); refuse_all "METADUMP" "btrfs-image \(METADUMP flag\)" "$T/x.img"
setbits "$T/base.img" "$T/x.img" flags $((1 << 34)); refuse_all "METADUMP_V2" "btrfs-image \(METADUMP_V2 flag\)" "$T/x.img"
setbits "$T/base.img" "$T/x.img" flags $((1 << 37)); refuse_all "super flag bit 37" "superblock flag bits .*\(0x2000000000\)" "$T/x.img"
setbits "$T/base.img" "$T/x.img" flags $((1 << 50)); refuse_all "super flag bit 50" "superblock flag bits .*\(0x4000000000000\)" "$T/x.img"
setbits "$T/base.img" "$T/x.img" compat_ro_flags $((1 << 20)); refuse_all "compat_ro bit 20" "compat_ro feature bits .*\(0x100000\)" "$T/x.img"
setbits "$T/base.img" "$T/x.img" incompat_flags $((1 << 30)); refuse_all "incompat bit 30" "incompat feature bits .*\(0x40000000\)" "$T/x.img"
setbits "$T/base.img" "$T/x.img" incompat_flags $((1 << 12)); refuse_all "ZONED" "zoned filesystem \(ZONED\)" "$T/x.img"
"$FSCTL" inspect dump-super "$T/x.img" > "$T/out" 2>&1
grep -qE 'incompat_flags_names.*ZONED' "$T/out" || { cat "$T/out"; fail "dump-super does not name ZONED"; }
# Features the kernel here cannot make (mkfs.btrfs 6.2 has no raid-stripe-tree,
# extent tree v2 or remap tree): the bit alone, refused by name.
setbits "$T/base.img" "$T/x.img" incompat_flags $((1 << 13)); refuse_all "EXTENT_TREE_V2" "extent tree v2 \(EXTENT_TREE_V2\)" "$T/x.img"
setbits "$T/base.img" "$T/x.img" incompat_flags $((1 << 14)); refuse_all "RAID_STRIPE_TREE" "RAID stripe tree \(RAID_STRIPE_TREE\)" "$T/x.img"
setbits "$T/base.img" "$T/x.img" incompat_flags $((1 << 17)); refuse_all "REMAP_TREE" "remap tree \(REMAP_TREE\)" "$T/x.img"
rm -f "$T/x.img"

# RAID5 and RAID6 metadata, made by the real mkfs.btrfs over 4 files: fsctl
# does not read or write their stripes; every command (write or read) exits 4
# naming the profile, and no file changes.
for prof in raid5 raid6; do
  devs=()
  for i in 1 2 3 4; do truncate -s 300M "$T/$prof-$i.img"; devs+=("$T/$prof-$i.img"); done
  mkfs.btrfs -q -f -m $prof -d $prof "${devs[@]}" > /dev/null 2>&1 || { echo "NOTE: mkfs.btrfs -m $prof failed here: not checked"; continue; }
  before=$(img_sum "${devs[@]}")
  for args in "convert --bg-tree" "balance -m" "balance -m --dry-run" "qgroup verify --repair" "quota disable" "quota enable" \
              "balance cancel" "check"; do
    rc=0
    # shellcheck disable=SC2086
    "$FSCTL" $args "${devs[@]}" > "$T/out" 2>&1 || rc=$?
    [ "$rc" = 4 ] || { cat "$T/out"; fail "$prof: '$args' exit $rc, expect 4"; }
    grep -qE -- "unsupported profile $prof" "$T/out" || { cat "$T/out"; fail "$prof: '$args' does not name the profile"; }
  done
  [ "$(img_sum "${devs[@]}")" = "$before" ] || fail "$prof: a command changed the devices"
  echo "$prof metadata: 8 commands exit 4 naming it, devices unchanged"
  rm -f "${devs[@]}"
done

# A real seed and sprout.
( need_mount ) > /dev/null 2>&1 || skip "mount -o loop unavailable: the seed + sprout pair is not checked (the flag refusals above passed)"
mkimg "$T/pair-seed.img" 256M -n 4096
mkdir -p "$T/mnt"
attach "$T/pair-seed.img"; seed_dev=$LOOPDEV
mount "$seed_dev" "$T/mnt"; CV_MNTS+=("$T/mnt")
for i in $(seq 1 40); do head -c $((i * 997)) /dev/urandom > "$T/mnt/seedfile$i"; done
umount "$T/mnt"
btrfstune -S 1 "$seed_dev"
truncate -s 256M "$T/pair-sprout.img"
attach "$T/pair-sprout.img"; sprout_dev=$LOOPDEV
mount "$seed_dev" "$T/mnt"
btrfs device add -f "$sprout_dev" "$T/mnt" > /dev/null
mount -o remount,rw "$T/mnt"
for i in $(seq 1 40); do head -c $((i * 1013)) /dev/urandom > "$T/mnt/sproutfile$i"; done
(cd "$T/mnt" && sha256sum seedfile* sproutfile* | sort) > "$T/sums.before"
umount "$T/mnt"
refuse_all "seed of a live sprout" "seed device \(SEEDING flag\)" "$seed_dev"
btrfs device scan "$seed_dev" "$sprout_dev" > /dev/null 2>&1 || true
mount "$sprout_dev" "$T/mnt" || fail "the sprout does not mount after fsctl was run on its seed"
(cd "$T/mnt" && sha256sum seedfile* sproutfile* | sort) > "$T/sums.after"
umount "$T/mnt"
cmp -s "$T/sums.before" "$T/sums.after" || fail "the sprout's files changed"
echo "sprout: mounts after every write command was refused on its seed; $(wc -l < "$T/sums.after") files' sha256 unchanged"
echo ok
