#!/usr/bin/env bash
# 120-progs-spellings: what a btrfs admin types for btrfs-progs 6.19 works
# (issue 13): `balance start -musage=50`, `-m usage=50` and `-d` refused with
# exit 2 and a message saying why; an unknown command or subcommand named
# with the closest one; `check --readonly -p`; `inspect dump-super -f`, `-a`,
# `--all`, `-s N`; btrfstune's `--convert-to/from-block-group-tree`; the unit
# options (--raw --human-readable --iec --si --kbytes ... --tbytes) on every
# text table and summary, JSON in bytes. With a loop mount: `qgroup show
# -pcre`, `-p`, `-r`, `--sort=-excl,qgroupid`, `--raw`, `--si --kbytes`
# compared line by line with `btrfs qgroup show` on the mounted filesystem
# (btrfs-progs 6.19 when /var/tmp/btrfs-progs-ref/btrfs exists).
source "$(dirname "$0")/../common/lib.sh"

# run NAME WANT ARGS...: fsctl ARGS exits WANT; stdout in $T/NAME.out, stderr in $T/NAME.err.
run() {
  local name=$1 want=$2 rc
  shift 2
  set +e
  "$FSCTL" "$@" > "$T/$name.out" 2> "$T/$name.err"; rc=$?
  set -e
  ! grep -qE "AddressSanitizer|runtime error:|terminate called" "$T/$name.err" || { cat "$T/$name.err"; fail "$name: crash"; }
  [ "$rc" -eq "$want" ] || { cat "$T/$name.out" "$T/$name.err"; fail "$name: fsctl $* exited $rc, expect $want"; }
}
# has NAME.out|NAME.err TEXT: the file contains TEXT (fixed string).
has() { grep -qF -- "$2" "$T/$1" || { cat "$T/$1"; fail "$1 does not contain '$2'"; }; }
hasnt() { ! grep -qF -- "$2" "$T/$1" || { cat "$T/$1"; fail "$1 contains '$2'"; }; }

IMG="$T/a.img"
mkimg "$IMG" 512M

echo "== unknown commands: named, closest one suggested, exit 2"
run cmd1 2 balanse "$IMG"
has cmd1.err "ERROR: unknown command 'balanse'; did you mean 'balance'?"
run cmd2 2 qgroup shwo "$IMG"
has cmd2.err "unknown subcommand 'shwo' of 'qgroup'; did you mean 'show'?"
run cmd3 2 --format json inspect dump-supper "$IMG"
has cmd3.err "did you mean 'dump-super'?"
run cmd4 2 frobnicate "$IMG"
has cmd4.err "unknown command 'frobnicate' (one of:"

echo "== balance start, -m usage=50, -d"
run bal1 0 balance start -musage=50 "$IMG"
has bal1.out "relocated"
run bal2 2 balance start -m usage=50 "$IMG"
has bal2.err "filters attach to their option without a space, as in -musage=50"
run bal3 2 balance -m usage "$IMG"
has bal3.err "'usage' is a balance filter"
run bal4 2 balance start -dusage=50 "$IMG"
has bal4.err "fsctl relocates metadata only"
run bal5 2 balance start -d -m "$IMG"
has bal5.err "fsctl relocates metadata only"
run bal6 2 balance --data=usage=10 -m "$IMG"
has bal6.err "fsctl relocates metadata only"
run bal7 0 --format json balance start -m --dry-run "$IMG"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["dry_run"] is True and isinstance(j["reserved_bytes"], int)' "$T/bal7.out" ||
  fail "balance start --format json: not the balance report"
run bal8 0 balance start -m --dry-run --human-readable "$IMG"
grep -Eq 'reserving [0-9]+\.[0-9]{2}(KiB|MiB|GiB); nothing written' "$T/bal8.out" || { cat "$T/bal8.out"; fail "balance dry run --human-readable"; }
run bal9 0 balance start -m --dry-run "$IMG"
# btrfs balance status's words and exit code (0: no balance found).
run bal11 0 balance status "$IMG"
[ "$(cat "$T/bal11.out")" = "No balance found on '$IMG'" ] || { cat "$T/bal11.out"; fail "balance status without a balance"; }
grep -Eq 'reserving [0-9]+ bytes; nothing written' "$T/bal9.out" || { cat "$T/bal9.out"; fail "balance dry run: bytes by default"; }
run bal10 0 balance -m --iec "$IMG"
grep -Eq 'commits, [0-9]+\.[0-9]{2}(B|KiB|MiB) used \([0-9]+\.[0-9]{2}(KiB|MiB|GiB) reserved\)' "$T/bal10.out" || { cat "$T/bal10.out"; fail "balance summary --iec"; }

echo "== check --readonly, -p, --progress"
run ck1 0 check --readonly "$IMG"
run ck2 0 check -p "$IMG"
run ck3 0 check --readonly --progress --kbytes "$IMG"
has ck3.out " 0 errors"
"$FSCTL" check --help | grep_q "always read-only" || fail "check --help does not say it is always read-only"

echo "== inspect dump-super -f, -a, --all, --all-mirrors, -s N"
run ds0 0 inspect dump-super "$IMG"
run dsf 0 inspect dump-super -f "$IMG"
run dsfull 0 inspect dump-super --full "$IMG"
cmp -s "$T/dsf.out" "$T/dsfull.out" || fail "-f and --full differ"
has dsf.out "sys_chunk_array[2048]:"
has dsf.out "backup_roots[4]:"
hasnt ds0.out "sys_chunk_array[2048]:"
# The sys_chunk_array and backup roots as btrfs prints them.
REF=/var/tmp/btrfs-progs-ref/btrfs
[ -x "$REF" ] || REF=btrfs
"$REF" inspect-internal dump-super -f "$IMG" > "$T/ref.dsf"
sect() { awk '/^sys_chunk_array\[/ {on=1} on' "$1" | sed -e '/^$/d'; }
diff <(sect "$T/ref.dsf") <(sect "$T/dsf.out") > "$T/dsf.diff" || { cat "$T/dsf.diff"; fail "dump-super -f: sys_chunk_array/backup roots differ from $REF"; }
run dsj 0 --format json inspect dump-super -f "$IMG"
python3 - "$T/dsj.out" <<'PY' || fail "dump-super -f --format json: no sys_chunk_array"
import json, sys
sb = json.load(open(sys.argv[1]))["devices"][0]["copies"][0]["superblock"]
c = sb["sys_chunk_array"]
assert isinstance(c, list) and c and c[0]["type_name"].startswith("SYSTEM") and c[0]["stripes"], c
assert len(sb["backup_roots"]) == 4
PY
run dsa 0 inspect dump-super -a "$IMG"
run dsall 0 inspect dump-super --all "$IMG"
run dsallm 0 inspect dump-super --all-mirrors "$IMG"
cmp -s "$T/dsa.out" "$T/dsall.out" && cmp -s "$T/dsa.out" "$T/dsallm.out" || fail "-a, --all, --all-mirrors differ"
[ "$(grep -c '^superblock: bytenr=' "$T/dsa.out")" -eq 2 ] || fail "-a on a 512M image: expect copies 0 and 1"
run ds1 0 inspect dump-super -s 1 "$IMG"
has ds1.out "superblock: bytenr=67108864, device="
[ "$(grep -c '^superblock: bytenr=' "$T/ds1.out")" -eq 1 ] || fail "-s 1: one copy"
run ds1l 0 inspect dump-super --super 0 "$IMG"
has ds1l.out "superblock: bytenr=65536, device="
run ds2 2 inspect dump-super -s 2 "$IMG"
has ds2.err "superblock copy 2 lies beyond the end of the device"
run ds3 2 inspect dump-super -s 3 "$IMG"
run ds4 2 inspect dump-super -a -s 1 "$IMG"

echo "== convert: btrfstune's names"
run cv1 0 convert --convert-to-block-group-tree --human-readable "$IMG"
grep -Eq 'tree blocks written, [0-9]+\.[0-9]{2}(B|KiB|MiB) used, [0-9]+\.[0-9]{2}(B|KiB|MiB) reserved\)' "$T/cv1.out" || { cat "$T/cv1.out"; fail "convert summary --human-readable"; }
run bg1 0 inspect block-groups "$IMG"
has bg1.out "block group items: block-group-tree"
run cv2 0 convert --convert-from-block-group-tree "$IMG"
grep -Eq 'tree blocks written, [0-9]+ bytes used, [0-9]+ reserved\)' "$T/cv2.out" || { cat "$T/cv2.out"; fail "convert summary: bytes by default"; }
run bg2 0 inspect block-groups "$IMG"
has bg2.out "block group items: extent-tree"
run cv3 2 convert --convert-to-block-group-tree --no-bg-tree "$IMG"

echo "== unit options on tree-stats and block-groups; JSON stays in bytes"
run ts0 0 inspect tree-stats "$IMG"
grep -Eq '^unique tree blocks [0-9]+ \([0-9]+ bytes\), read [0-9]+ bytes in' "$T/ts0.out" || fail "tree-stats: bytes by default"
run ts1 0 inspect tree-stats --human-readable "$IMG"
grep -Eq '^unique tree blocks [0-9]+ \([0-9]+\.[0-9]{2}KiB\), read [0-9]+\.[0-9]{2}KiB in' "$T/ts1.out" || { cat "$T/ts1.out"; fail "tree-stats --human-readable"; }
run ts2 0 --si --kbytes inspect tree-stats "$IMG"
grep -Eq '^ROOT_TREE +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]{2}kB ' "$T/ts2.out" || { cat "$T/ts2.out"; fail "tree-stats --si --kbytes"; }
run ts3 0 inspect tree-stats --human-readable --raw "$IMG"
cmp -s <(sed 's/in [0-9.]* s$//' "$T/ts0.out") <(sed 's/in [0-9.]* s$//' "$T/ts3.out") || fail "--raw after --human-readable: not bytes"
run ts4 0 --format json inspect tree-stats --human-readable "$IMG"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert isinstance(j["unique_bytes"], int)' "$T/ts4.out" || fail "JSON not in bytes with a unit option"
run bg3 0 inspect block-groups --mbytes "$IMG"
grep -Eq '^ +[0-9]+ +[0-9]+\.[0-9]{2}MiB +[0-9]+\.[0-9]{2}MiB ' "$T/bg3.out" || { cat "$T/bg3.out"; fail "block-groups --mbytes"; }
run bg4 0 inspect block-groups --gbytes --si "$IMG"
grep -Eq '^ +[0-9]+ +[0-9]+\.[0-9]{2}GB ' "$T/bg4.out" || { cat "$T/bg4.out"; fail "block-groups --gbytes --si"; }
run bg5 0 inspect block-groups --tbytes "$IMG"
grep -Eq '^ +[0-9]+ +0\.00TiB ' "$T/bg5.out" || { cat "$T/bg5.out"; fail "block-groups --tbytes"; }
run ck4 0 check "$IMG"

echo "== qgroup show, qgroup verify (needs a loop mount)"
if ! ( need_mount ) > /dev/null 2>&1; then
  echo "SKIP (qgroup part): mount -o loop not available"
  echo "OK"
  exit 0
fi
Q="$T/q.img"; M="$T/m"
mkimg "$Q" 512M
mkdir -p "$M"
trap 'release_all "$M" --' EXIT
mount -o loop "$Q" "$M"
btrfs quota enable "$M"
btrfs subvolume create "$M/sv" > /dev/null
head -c 3000000 /dev/urandom > "$M/sv/f"
btrfs subvolume snapshot "$M/sv" "$M/snap" > /dev/null
echo x > "$M/snap/g"
btrfs qgroup create 1/100 "$M"
btrfs qgroup assign --no-rescan 0/256 1/100 "$M" 2> /dev/null || btrfs qgroup assign 0/256 1/100 "$M"
btrfs qgroup assign 0/257 1/100 "$M" > /dev/null 2>&1 || true
btrfs qgroup limit 10M 0/256 "$M"
btrfs qgroup limit -e 2G 1/100 "$M"
sync
btrfs quota rescan -w "$M" > /dev/null
# The kernel's view, with the reference btrfs when there is one.
refshow() { "$REF" qgroup show "$@" "$M" 2> /dev/null; }
refshow -pcre > "$T/r.pcre"
refshow > "$T/r.plain"
refshow -p --raw --sort=-excl,qgroupid > "$T/r.psort"
refshow -r --si --kbytes > "$T/r.rsi"
refshow -c -e --raw > "$T/r.ce"
refshow -pcre --sort=path > "$T/r.path"
umount "$M"
# progs prints a wrong member count for higher-level qgroups ("<0 member
# qgroups>"; fsctl counts the direct members): compare paths of level-0 rows.
norm() { sed -E 's/<[0-9]+ member qgroups>/<N member qgroups>/' "$1"; }
same() {
  local name=$1
  shift
  run "$name" 0 qgroup show "$@" "$Q"
  diff <(norm "$T/r.$name") <(norm "$T/$name.out") > "$T/$name.diff" || { cat "$T/$name.diff"; fail "qgroup show $*: differs from $REF qgroup show $*"; }
}
same pcre -pcre
same psort -p --raw --sort=-excl,qgroupid
same rsi -r --si --kbytes
same ce -c -e --raw
same path -pcre --sort=path
# The default prints every column (fsctl's table has always been -pcre's).
run dflt 0 qgroup show "$Q"
cmp -s "$T/dflt.out" "$T/pcre.out" || fail "qgroup show without -pcre: not the -pcre table"
run combined 0 qgroup show -p -c -r -e "$Q"
cmp -s "$T/combined.out" "$T/pcre.out" || fail "-p -c -r -e differs from -pcre"
run sortsp 0 qgroup show --sort -excl,+qgroupid --raw "$Q"
run sortbad 2 qgroup show --sort=excl,size "$Q"
has sortbad.err "size"
run rawg 0 --raw qgroup show -p "$Q"
run rawl 0 qgroup show -p --raw "$Q"
cmp -s "$T/rawg.out" "$T/rawl.out" || fail "global --raw and qgroup show --raw differ"
run sj 0 --format json qgroup show -p --human-readable "$Q"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); q=[x for x in j["qgroups"] if x["qgroupid"]=="0/256"][0]; assert isinstance(q["referenced"], int) and q["max_referenced"]==10485760 and q["parents"]==["1/100"], q' "$T/sj.out" ||
  fail "qgroup show JSON changed"
run v1 0 qgroup verify -v "$Q"
grep -Eq '^0/256 +ok +[0-9]+ +[0-9]+ +0 ' "$T/v1.out" || { cat "$T/v1.out"; fail "qgroup verify table: bytes by default"; }
run v2 0 qgroup verify -v --human-readable "$Q"
grep -Eq '^0/256 +ok +[0-9.]+MiB +[0-9.]+MiB +0\.00B ' "$T/v2.out" || { cat "$T/v2.out"; fail "qgroup verify --human-readable"; }
echo "OK"
