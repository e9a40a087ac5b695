#!/usr/bin/env bash
# 092-balance-refusals: `fsctl balance` refuses, with the documented exit
# code, a clear message and the image byte-identical: a paused kernel balance
# (BALANCE_ITEM in the root tree), a leftover relocation tree, a subvolume
# whose deletion is in progress (ROOT_ITEM refs 0), mixed data+metadata block
# groups, a mounted device, convert= to raid1 on one device, to fewer copies
# without -f, to raid5, -s without
# -f, bad filters. The planted states are made with tests/tools/put_item (the
# kernel makes them only by chance: a balance paused at the right moment, a
# crash during a kernel balance, an unmount during subvolume cleanup).
# A dry run writes nothing either.
source "$(dirname "$0")/../common/lib.sh"
need_root
PUT=${FSCTL_PUT_ITEM:?FSCTL_PUT_ITEM must point at the put_item test tool}

# Base: a subvolume and a snapshot with some files, quota on.
BASE="$T/base.img"
if ( need_mount ) > /dev/null 2>&1; then
  mksnapimg "$BASE" 300
  HAVE_SUBVOL=1
else
  mkimg "$BASE" 1G -n 4096
  echo "NOTE: mount -o loop unavailable: the refusal cases run on a fresh mkfs image"
  HAVE_SUBVOL=0
fi

# refuse NAME IMG EXIT TEXT ARGS...: fsctl balance ARGS exits EXIT, its error
# names TEXT, and IMG is unchanged.
refuse() {
  local name=$1 img=$2 want=$3 text=$4 rc
  shift 4
  local before after
  before=$(img_sum "$img")
  set +e
  "$FSCTL" balance "$@" > "$T/$name.out" 2> "$T/$name.err"; rc=$?
  set -e
  after=$(img_sum "$img")
  ! grep -qE "AddressSanitizer|runtime error:|terminate called" "$T/$name.err" || { cat "$T/$name.err"; fail "$name: crash"; }
  [ "$rc" -eq "$want" ] || { cat "$T/$name.err"; fail "$name: exit $rc, expect $want"; }
  grep -qF -- "$text" "$T/$name.err" || { cat "$T/$name.err"; fail "$name: the error does not say '$text'"; }
  [ "$before" = "$after" ] || fail "$name: the image changed"
  echo "ok: $name (exit $rc): $(head -1 "$T/$name.err")"
}

# A paused kernel balance: BALANCE_ITEM (BALANCE_OBJECTID -4, TEMPORARY_ITEM
# 248, 0), a btrfs_balance_item of 448 bytes with the METADATA flag.
cp --sparse=always "$BASE" "$T/paused.img"
"$PUT" "$T/paused.img" 1 -4 248 0 "04$(printf '0%.0s' $(seq 1 894))"
refuse paused-balance "$T/paused.img" 4 "kernel balance of metadata block groups is paused" -m "$T/paused.img"

# Relocation trees of an interrupted kernel balance: ROOT_ITEM (-8, 132, 5).
cp --sparse=always "$BASE" "$T/reloc.img"
"$PUT" "$T/reloc.img" copy 1 5 132 0 -8 132 5
refuse reloc-tree "$T/reloc.img" 4 "the relocation tree of subvolume 5 remains" -m "$T/reloc.img"

if [ "$HAVE_SUBVOL" = 1 ]; then
  # A subvolume being deleted: the snapshot's ROOT_ITEM with refs 0 (offset
  # 216: after the 160-byte inode item and 7 u64 fields).
  cp --sparse=always "$BASE" "$T/dead.img"
  key=$(btrfs inspect-internal dump-tree -t root "$T/dead.img" | grep -oE 'key \(257 ROOT_ITEM [0-9]+\)' | head -1 | grep -oE '[0-9]+\)$' | tr -d ')')
  "$PUT" "$T/dead.img" set-u32 1 257 132 "$key" 216 0
  refuse deleting-subvolume "$T/dead.img" 4 "being deleted" -m "$T/dead.img"

  # Mounted.
  cp --sparse=always "$BASE" "$T/mounted.img"
  mkdir -p "$T/mnt2"
  mount -o loop,ro "$T/mounted.img" "$T/mnt2"
  set +e
  "$FSCTL" balance -m "$T/mounted.img" > /dev/null 2> "$T/mounted.err"; rc=$?
  set -e
  umount "$T/mnt2"
  [ "$rc" -eq 5 ] || { cat "$T/mounted.err"; fail "mounted: exit $rc, expect 5"; }
  echo "ok: mounted (exit 5)"
fi

# Mixed block groups.
mkimg "$T/mixed.img" 256M --mixed
refuse mixed "$T/mixed.img" 4 "mixes data and metadata" -m "$T/mixed.img"

# Not supported yet / usage.
refuse convert-raid1-one-device "$BASE" 2 "needs at least 2 devices" -mconvert=raid1 "$BASE"
refuse convert-less-redundancy "$BASE" 2 "add -f" -mconvert=single "$BASE"
refuse convert-raid5 "$BASE" 4 "RAID5/RAID6" -mconvert=raid5 "$BASE"
refuse system-alone "$BASE" 2 "needs -f" -s "$BASE"
refuse bad-usage "$BASE" 2 "percentages go up to 100" -musage=150 "$BASE"
refuse unknown-filter "$BASE" 2 "unknown balance filter" -mfoo=1 "$BASE"
refuse soft-alone "$BASE" 2 "soft needs convert" -msoft "$BASE"
refuse drange-alone "$BASE" 2 "drange needs devid" -mdrange=0..100 "$BASE"
refuse no-m "$BASE" 2 "give -m" "$BASE"

# A dry run writes nothing.
before=$(img_sum "$BASE")
"$FSCTL" --format json balance -m --dry-run "$BASE" > "$T/dry.json" || { cat "$T/dry.json"; fail "dry run failed"; }
[ "$(img_sum "$BASE")" = "$before" ] || fail "the dry run changed the image"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["dry_run"] and r["whole_run_simulated"] and r["commits"] >= 1 and r["reserved_bytes"] > 0, r' "$T/dry.json" ||
  fail "dry run report"
echo "ok: dry run"
echo PASS
