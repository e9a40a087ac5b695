#!/usr/bin/env bash
# 007-json-schemas: every command's `--format json` output is one document
# valid against its schema in docs/json/ (tests/tools/validate_json.py):
# reports of each command (dry runs and real runs), and the error document
# of each kind of refusal (usage, not btrfs, a missing device with its devid,
# a damaged tree block with its bytenr, a mounted device, an unsupported
# filesystem, a file that does not exist). Also the shapes issue 13 fixed:
# one bg_tree_state object in check and inspect block-groups, qgroup path
# "" / null with members, per-type balance filters, rescan null, the repair
# verdict, and dump-tree -t bogus printing the error document alone. And
# the rescue commands' reports (quota disable/enable, balance cancel,
# rescue finish-drop).
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_mount
VALIDATE="python3 $FSCTL_SRC/tests/tools/validate_json.py"
python3 -c 'import jsonschema' 2> /dev/null || skip "python3-jsonschema is not installed (scripts/setup.sh installs it)"
$VALIDATE --help > /dev/null

MNT="$T/mnt"
mkdir -p "$MNT"
LOOPS=()
trap 'release_all "$MNT" -- "${LOOPS[@]}"' EXIT

n=0
# js NAME RC report|error ARGS...: `fsctl --format json ARGS` exits RC and
# prints one document of that kind, valid against its schema; kept in
# $T/NAME.json. An error document also leaves its message on stderr.
js() {
  local name=$1 want=$2 kind=$3 rc=0
  shift 3
  "$FSCTL" --format json "$@" > "$T/$name.json" 2> "$T/$name.err" || rc=$?
  ! grep -qE 'AddressSanitizer|runtime error:|terminate called' "$T/$name.err" || { cat "$T/$name.err"; fail "$name: crash"; }
  [ "$rc" -eq "$want" ] || { cat "$T/$name.err" "$T/$name.json" | head -40; fail "$name: exit $rc, expect $want: fsctl $*"; }
  $VALIDATE --expect "$kind" "$T/$name.json" || fail "$name: fsctl --format json $* does not match its schema"
  # The message stays on stderr too (CLI11's own words for a command line
  # that does not parse, else an ERROR: line).
  if [ "$kind" = error ]; then
    [ -s "$T/$name.err" ] || fail "$name: no message on stderr"
  fi
  n=$((n + 1))
  echo "ok: $name (exit $rc, $kind)"
}
# jq_ FILE EXPR: a python expression over the document j, printed.
jq_() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# is FILE EXPR: the python expression over j holds.
is() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert eval(sys.argv[2]), sys.argv[2]' "$1" "$2" || fail "$1: not $2"; }

# The image: subvolume sv with files, its snapshot, quota on, a level-1
# qgroup 1/100 holding both, assigned without a rescan (INCONSISTENT).
IMG="$T/q.img"
mksnapimg "$IMG" 200 20
mount -o loop "$IMG" "$MNT"
btrfs qgroup create 1/100 "$MNT"
btrfs qgroup assign --no-rescan 0/256 1/100 "$MNT" 2> /dev/null || btrfs qgroup assign 0/256 1/100 "$MNT"
btrfs qgroup assign --no-rescan 0/257 1/100 "$MNT" 2> /dev/null || btrfs qgroup assign 0/257 1/100 "$MNT"
# While mounted: write commands refuse (exit 5, busy, the device named).
js mounted-convert 5 error convert --bg-tree "$IMG"
is "$T/mounted-convert.json" 'j["error"]["kind"]=="busy" and j["error"]["code"]==5 and j["error"]["device"].endswith("/q.img")'
js mounted-balance 5 error balance -m "$IMG"
js mounted-repair 5 error qgroup verify --repair "$IMG"
umount "$MNT"
PLAIN="$T/plain.img"
mkimg "$PLAIN" 256M

# inspect: every subcommand and option.
js super 0 report inspect dump-super "$IMG"
js super-all 0 report inspect dump-super -a "$IMG"
js super-full 0 report inspect dump-super -f "$IMG"
js super-copy1 0 report inspect dump-super -s 1 "$IMG"
js super-two 0 report inspect dump-super "$IMG" "$PLAIN"
js tree-all 0 report inspect dump-tree "$IMG"
js tree-root 0 report inspect dump-tree -t root "$IMG"
js tree-quota 0 report inspect dump-tree -t quota "$IMG"
root_bytenr=$(jq_ "$T/tree-root.json" 'j["trees"][0]["blocks"][0]["bytenr"]')
js tree-block 0 report inspect dump-tree -b "$root_bytenr" "$IMG"
js tree-stats 0 report inspect tree-stats "$IMG"
js block-groups 0 report inspect block-groups "$IMG"
js usage 0 report inspect usage "$IMG"
# Refusals of inspect: an unknown tree, an absent tree, a copy beyond the end.
js tree-bogus 2 error inspect dump-tree -t bogus "$IMG"
is "$T/tree-bogus.json" 'j["error"]["kind"]=="usage" and "bogus" in j["error"]["message"]'
js tree-absent 2 error inspect dump-tree -t 4242 "$IMG"
js super-beyond 2 error inspect dump-super -s 2 "$PLAIN"

# qgroup show: paths as data, members of 1/100, rescan null when none runs.
js show 0 report qgroup show "$IMG"
is "$T/show.json" '{q["qgroupid"]: q["path"] for q in j["qgroups"]} == {"0/5": "", "0/256": "sv", "0/257": "snap", "1/100": None}'
is "$T/show.json" '[q["members"] for q in j["qgroups"] if q["qgroupid"]=="1/100"] == [["0/256", "0/257"]]'
is "$T/show.json" 'all(q["members"]==[] and q["subvol_exists"] for q in j["qgroups"] if q["qgroupid"].startswith("0/"))'
is "$T/show.json" '[q["parents"] for q in j["qgroups"] if q["qgroupid"]=="0/256"] == [["1/100"]]'
is "$T/show.json" 'j["status"]["rescan"] is None and not j["status"]["rescan_running"]'
js show-sorted 0 report qgroup show -pcre --sort=-excl,path "$IMG"
js show-noquota 0 report qgroup show "$PLAIN"
is "$T/show-noquota.json" 'j["quota_enabled"] is False'
js show-badsort 2 error qgroup show --sort=size "$IMG"

# qgroup verify: parents/children, subvol_exists null above level 0; the
# repair's verdict is the document's.
js verify 0 report qgroup verify "$IMG"
is "$T/verify.json" '[(r["subvol_exists"], r["children"]) for r in j["qgroups"] if r["qgroupid"]=="1/100"] == [(None, ["0/256", "0/257"])]'
is "$T/verify.json" '[r["parents"] for r in j["qgroups"] if r["qgroupid"]=="0/257"] == [["1/100"]]'
js repair 0 report qgroup verify --repair "$IMG"
is "$T/repair.json" 'j["ok"] is True and j["repair"]["mismatches_left"]==0 and j["repair"]["wrote"]'
js verify-after 0 report qgroup verify "$IMG"
is "$T/verify-after.json" 'j["ok"] and j["mismatches"]==0 and not j["status"]["inconsistent"]'
js verify-noquota 7 report qgroup verify "$PLAIN"

# check and block-groups: the same bg_tree_state object.
js check 0 report check "$IMG"
is "$T/check.json" 'isinstance(j["bg_tree_state"], dict) and j["bg_tree_state"]["state"]=="extent-tree"'
[ "$(jq_ "$T/check.json" 'j["bg_tree_state"]')" = "$(jq_ "$T/block-groups.json" 'j["bg_tree_state"]')" ] ||
  fail "bg_tree_state differs between check and inspect block-groups"

# convert: dry run, both directions, nothing to do.
js convert-dry 0 report convert --bg-tree --dry-run "$IMG"
js convert 0 report convert --bg-tree --batch 1 "$IMG"
js convert-again 0 report convert --bg-tree "$IMG"
is "$T/convert-again.json" 'j["already_done"] is True'
js check-bgt 0 report check "$IMG"
js block-groups-bgt 0 report inspect block-groups "$IMG"
[ "$(jq_ "$T/check-bgt.json" 'j["bg_tree_state"]')" = "$(jq_ "$T/block-groups-bgt.json" 'j["bg_tree_state"]')" ] ||
  fail "bg_tree_state differs between check and inspect block-groups after convert"
js convert-back 0 report convert --no-bg-tree "$IMG"
js convert-usage 2 error convert "$IMG"

# balance: per-type filters (-m alone: system with the metadata filters).
js balance-dry 0 report balance -m --dry-run "$IMG"
is "$T/balance-dry.json" 'j["filters"]["metadata"]["text"]=="" and j["filters"]["system"]["text"]==""'
js balance 0 report balance -musage=100,limit=1 "$IMG"
is "$T/balance.json" 'j["filters"]["metadata"]["limit"]=={"min": None, "max": 1} and j["filters"]["system"]["text"]=="usage=100,limit=1"'
is "$T/balance.json" 'j["qgroups"]["verified"] and j["qgroups"]["consistent"]'
js balance-ms 0 report balance -m -susage=100 "$IMG"
is "$T/balance-ms.json" 'j["filters"]["metadata"]["usage"] is None and j["filters"]["system"]["usage"]=={"min": None, "max": 100}'
js balance-s 0 report balance -s -f --dry-run "$IMG"
is "$T/balance-s.json" 'j["filters"]["metadata"] is None and j["filters"]["system"] is not None'
js balance-data 2 error balance -d "$IMG"
js balance-space 2 error balance -m usage=50 "$IMG"
js balance-badfilter 2 error balance -mbogus=1 "$IMG"
js balance-s-alone 2 error balance -s "$IMG"

# Rescue commands (issue 15): balance cancel without a paused balance, quota
# disable and enable with their dry runs, on a copy.
cp --sparse=always "$IMG" "$T/rescue.img"
js balance-cancel 0 report balance cancel --dry-run "$T/rescue.img"
is "$T/balance-cancel.json" 'not j["balance_found"] and j["transid"] is None'
js balance-status 0 report balance status "$T/rescue.img"
is "$T/balance-status.json" 'j["balance"]=="none" and j["balance_flags"] is None and j["balance_types"]==[]'
js quota-disable-dry 0 report quota disable --dry-run "$T/rescue.img"
js quota-disable 0 report quota disable "$T/rescue.img"
is "$T/quota-disable.json" 'j["wrote"] and j["quota_was_enabled"]'
js quota-disable-again 0 report quota disable "$T/rescue.img"
js quota-enable-dry 0 report quota enable --dry-run "$T/rescue.img"
js quota-enable 0 report quota enable "$T/rescue.img"
is "$T/quota-enable.json" 'j["wrote"] and j["qgroups_created"] >= 3'
js quota-usage 2 error quota "$T/rescue.img"
# rescue finish-drop: a subvolume deleted and unmounted at once (not
# dropped yet): the dry run, the run, nothing left to do.
mksnapimg "$T/drop.img" 60 2
mount -o loop "$T/drop.img" "$MNT"
btrfs subvolume delete "$MNT/sv" > /dev/null
umount "$MNT"
js finish-drop-dry 0 report rescue finish-drop --dry-run "$T/drop.img"
is "$T/finish-drop-dry.json" 'j["dry_run"] and len(j["subvolumes"])==1 and j["qgroups"] is None'
js finish-drop 0 report rescue finish-drop "$T/drop.img"
is "$T/finish-drop.json" 'j["subvolumes"][0]["dropped"] and j["qgroups"]["wrote"] and j["qgroups"]["qgroups_removed"]==["0/256"]'
js finish-drop-again 0 report rescue finish-drop "$T/drop.img"
is "$T/finish-drop-again.json" 'j["subvolumes"]==[] and j["commits"]==0'

# Command lines that do not parse: still one error document.
js unknown-command 2 error balanse -m "$IMG"
js unknown-option 2 error inspect dump-tree --bogus "$IMG"
is "$T/unknown-option.json" 'j["__header"]["command"]=="inspect dump-tree" and j["error"]["kind"]=="usage"'
js no-device 2 error check
js cache-size 2 error --cache-size 1K check "$IMG"

# Not a filesystem, a file that is not there, a missing device (its devid),
# an unsupported filesystem for writing.
truncate -s 64M "$T/zero.img"
js not-btrfs 2 error inspect block-groups "$T/zero.img"
is "$T/not-btrfs.json" 'j["error"]["kind"]=="invalid_argument" and j["error"]["device"].endswith("zero.img")'
js no-file 3 error check "$T/nothing.img"
is "$T/no-file.json" 'j["error"]["kind"]=="io" and j["error"]["errno"]==2 and j["error"]["device"].endswith("nothing.img")'
truncate -s 256M "$T/d1.img" "$T/d2.img"
mkfs.btrfs -q -f -d single -m raid1 "$T/d1.img" "$T/d2.img" > /dev/null
js missing-device 3 error inspect block-groups "$T/d1.img"
is "$T/missing-device.json" 'j["error"]["kind"]=="not_found" and j["error"]["devid"]==2'
js two-devices 0 report check "$T/d1.img" "$T/d2.img"
mkimg "$T/v1cache.img" 256M -R ^free-space-tree
js unsupported 4 error balance -m "$T/v1cache.img"
is "$T/unsupported.json" 'j["error"]["kind"]=="unsupported" and j["error"]["code"]==4'

# A damaged tree block: its bytenr in the error; dump-tree still one whole
# document, the other trees in it and the error as its "error" member.
BAD="$T/bad.img"
mkimg "$BAD" 256M
read -r bytenr _ < <($EDIT blocks "$BAD" extent | head -1)
$EDIT flip "$BAD" "$bytenr" 300 > /dev/null
js bad-block-groups 3 error inspect block-groups "$BAD"
is "$T/bad-block-groups.json" "j['error']['kind'] in ('csum','corrupt') and j['error']['bytenr']==$bytenr"
js bad-dump-tree 3 report inspect dump-tree "$BAD"
is "$T/bad-dump-tree.json" "j['error']['bytenr']==$bytenr and any('error' in t for t in j['trees']) and len(j['trees'])>3"
js bad-convert 3 error convert --bg-tree "$BAD"

# The schemas themselves, and a document that breaks one is caught.
echo '{"__header": {"version": "2", "command": "check"}, "tree_blocks": -1}' > "$T/broken.json"
if $VALIDATE "$T/broken.json" > "$T/broken.out"; then fail "the validator accepted a broken check report"; fi
head -c 100 "$T/tree-all.json" > "$T/truncated.json"
if $VALIDATE "$T/truncated.json" > /dev/null; then fail "the validator accepted a truncated document"; fi
echo "ok: $n documents valid"
