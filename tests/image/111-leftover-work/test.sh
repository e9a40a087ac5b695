#!/usr/bin/env bash
# 111-leftover-work: work the kernel left unfinished and resumes at the next
# mount — a paused balance (BALANCE_ITEM), a relocation tree (ROOT_ITEM
# (TREE_RELOC ROOT_ITEM 256)), a subvolume being deleted (ROOT_ITEM refs 0) —
# is named by every command: balance refuses naming the balance's types and
# the relocation tree's subvolume (092 checks the image stays identical);
# check, convert and qgroup verify say it in a NOTE and in their JSON
# ("leftover_work"), and qgroup verify never counts a relocation tree as a
# subvolume. The states are planted with tests/tools/put_item (the kernel
# leaves them only when a balance is paused or a machine stops at the right
# moment).
source "$(dirname "$0")/../common/lib.sh"
need_mount
PUT=${FSCTL_PUT_ITEM:?FSCTL_PUT_ITEM must point at the put_item test tool}
IMG="$T/a.img"
mksnapimg "$IMG" 40 3

"$FSCTL" --format json qgroup verify "$IMG" > "$T/v0.json" || fail "verify before planting"

# A paused kernel balance of metadata: BALANCE_ITEM (BALANCE_OBJECTID -4,
# TEMPORARY_ITEM 248, 0), 448 bytes, flags METADATA (4).
"$PUT" "$IMG" 1 -4 248 0 "04$(printf '0%.0s' $(seq 1 894))"
# The relocation tree of subvolume sv (256): a copy of its ROOT_ITEM under
# (TREE_RELOC -8, ROOT_ITEM 132, 256).
key=$(btrfs inspect-internal dump-tree -t root "$IMG" | grep -oE 'key \(256 ROOT_ITEM [0-9]+\)' | head -1 | grep -oE '[0-9]+\)$' | tr -d ')')
[ -n "$key" ] || fail "no ROOT_ITEM of subvolume 256"
"$PUT" "$IMG" copy 1 256 132 "$key" -8 132 256
# The snapshot (257) being deleted: ROOT_ITEM refs (offset 216) 0.
key=$(btrfs inspect-internal dump-tree -t root "$IMG" | grep -oE 'key \(257 ROOT_ITEM [0-9]+\)' | head -1 | grep -oE '[0-9]+\)$' | tr -d ')')
[ -n "$key" ] || fail "no ROOT_ITEM of snapshot 257"
"$PUT" "$IMG" set-u32 1 257 132 "$key" 216 0

# leftover_ok FILE: the document's leftover_work names all three.
leftover_ok() {
  python3 - "$1" <<'PY' || fail "$1: leftover_work"
import json, sys
w = json.load(open(sys.argv[1]))["leftover_work"]
assert w["balance_paused"] is True and w["balance_types"] == ["metadata"], w
assert w["relocation_trees"] == [256], w
assert [d["root_id"] for d in w["dropping_subvolumes"]] == [257], w
PY
}
notes_ok() {
  grep_q "NOTE: a kernel balance of metadata block groups is paused" < "$1" || { cat "$1"; fail "$1: no balance NOTE"; }
  grep_q "NOTE: the relocation tree of subvolume 256 remains" < "$1" || { cat "$1"; fail "$1: no relocation tree NOTE"; }
}

rc=0
"$FSCTL" balance -m "$IMG" > /dev/null 2> "$T/balance.err" || rc=$?
[ $rc -eq 4 ] && grep_q "kernel balance of metadata block groups is paused" < "$T/balance.err" ||
  { cat "$T/balance.err"; fail "balance: exit $rc, expect 4 naming the paused metadata balance"; }

rc=0
"$FSCTL" --format json check "$IMG" > "$T/check.json" 2> "$T/check.err" || rc=$?
[ $rc -le 1 ] || { cat "$T/check.err"; fail "check: exit $rc"; }
leftover_ok "$T/check.json"
notes_ok "$T/check.err"
grep_q "NOTE: subvolume 257 is being deleted" < "$T/check.err" || { cat "$T/check.err"; fail "check: no dropping NOTE"; }

"$FSCTL" --format json qgroup verify "$IMG" > "$T/v1.json" 2> "$T/verify.err" || true
leftover_ok "$T/v1.json"
notes_ok "$T/verify.err"
python3 - "$T/v0.json" "$T/v1.json" <<'PY' || fail "verify counted the relocation tree"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert b["stats"]["subvolumes"] == a["stats"]["subvolumes"], (a["stats"], b["stats"])
assert not any(r["qgroupid"].endswith("/18446744073709551608") for r in b["qgroups"]), b["qgroups"]
PY

"$FSCTL" --format json convert --bg-tree "$IMG" > "$T/cv.json" 2> "$T/cv.err" || { cat "$T/cv.err"; fail "convert"; }
leftover_ok "$T/cv.json"
notes_ok "$T/cv.err"
echo PASS
