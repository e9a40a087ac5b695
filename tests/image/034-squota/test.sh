#!/usr/bin/env bash
# 034-squota: simple quotas (squota: SIMPLE_QUOTA incompat, kernel 6.7+) on
# images made here by mkfs.btrfs and the kernel, squota enabled with the
# BTRFS_IOC_QUOTA_CTL ioctl (tests/tools/quota_ctl.py; Debian's btrfs-progs
# 6.2 has no `quota enable -s`). Nodesize 4K (fs trees of height 3) and 16K.
# Contents: a subvolume P with data written before the enable (not counted)
# and changed after it; after the enable subvolumes A and B with ~1500 files,
# a snapshot S of A with its own writes and deletions, a reflink from A into B
# (charged to A, its owner), part of a shared extent overwritten, files
# deleted, a subvolume D deleted after a reflink out of it (its qgroup keeps
# the reflinked bytes), a level-1 qgroup 1/100 = {A, B}.
# Proves, against the kernel's numbers (`btrfs qgroup show --raw -pcre`; a
# squota kernel has no rescan: its numbers are the running totals):
#  - verify computes every qgroup as the kernel (referenced = exclusive, the
#    sum of the members for 1/100, compressed twins 0), exits 0, says mode
#    "simple" and the status item's enable_gen (JSON and text), show agrees;
#    D's qgroup is a space holder in both (verify status space_holder, show
#    <squota space holder>);
#  - btrfs check (btrfs-progs >= 6.7 when present) agrees;
#  - a QGROUP_INFO edited on disk is found (exit 1, the qgroup named) and
#    --repair writes it back (a crash after any of its writes leaves the old
#    or the new state, and a rerun finishes); the kernel mounts and shows the
#    true numbers and
#    keeps them exact through more writes and deletions (verify equals the
#    kernel after them);
#  - balance -m and convert --bg-tree / --no-bg-tree leave every number and
#    every owner (EXTENT_OWNER_REF, tree block header owner, extent
#    generation) as it was: verify clean and equal to the kernel before,
#    btrfs check clean, the kernel mounts with the same numbers and every
#    file's sha256, and after more kernel writes and deletions (which free
#    relocated blocks) its numbers still equal verify's.
# Skips (exit 77) where the kernel refuses simple quotas or loop mounts.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../039-qgroup-lib/qg.sh"
need_mount
QUOTA_CTL="python3 $FSCTL_SRC/tests/tools/quota_ctl.py"
EDIT="python3 $FSCTL_SRC/tests/image/common/btrfs_edit.py"
NEW_PROGS=/var/tmp/btrfs-progs-ref/btrfs   # btrfs-progs >= 6.7 (squota) on some machines only

# squota_truth MNT OUT: the kernel's numbers, normalized by qg.py.
squota_truth() {
  btrfs filesystem sync "$1" >/dev/null
  btrfs qgroup show --raw -pcre "$1" > "$2.txt"
  python3 "$QG" truth-from-progs-text "$2.txt" > "$2"
}
# files_sum MNT OUT: sha256 of every file, sorted.
files_sum() { (cd "$1" && find . -type f -exec sha256sum {} + | sort) > "$2"; }
# progs_check IMG: btrfs check --readonly with a btrfs-progs that knows
# SIMPLE_QUOTA (6.2 rejects the incompat bit); its qgroup check uses the
# squota rules too. Silent success when none is present.
progs_check() {
  [ -x "$NEW_PROGS" ] || return 0
  "$CHECK_RETRY" "$NEW_PROGS" check --readonly --qgroup-report "$1" > "$T/progs-check.txt" 2>&1 || { cat "$T/progs-check.txt"; return 1; }
  ! grep -q "are different" "$T/progs-check.txt"
}
# rows_ok VERIFY_JSON: every row ok, or space_holder (the deleted subvolume
# D's qgroup, which still holds the bytes reflinked out of it).
rows_ok() {
  python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
bad = [r for r in j["qgroups"] if r["status"] not in ("ok", "space_holder") or
       (r["status"] == "space_holder" and (r["subvol_exists"] or r["computed"] != r["ondisk"]))]
assert not bad and j["mismatches"] == 0 and j["ok"] is True, bad
assert any(r["status"] == "space_holder" for r in j["qgroups"]), "no space_holder row (D's qgroup)"
PY
}
# verify_equals IMG TRUTH TAG: verify exits 0, every row ok, computed = truth.
verify_equals() {
  run_rc "$T/verify-$3.json" "$FSCTL" --format json qgroup verify "$1"
  check "$3: verify exits 0 (rc $RC)" [ "$RC" -eq 0 ]
  check "$3: every row ok (D: space_holder)" rows_ok "$T/verify-$3.json"
  check "$3: computed = kernel (every qgroup)" python3 "$QG" check-computed "$T/verify-$3.json" "$2"
}
# kernel_churn MNT: more writes, overwrites and deletions by the kernel.
kernel_churn() {
  local m=$1 i
  for i in $(seq 1 200); do head -c $((i * 131 % 7000 + 1)) /dev/urandom > "$m/A/churn$i"; done
  rm -f "$m"/A/f3* "$m"/S/f4* "$m/B/big.reflink"
  dd if=/dev/urandom of="$m/S/big" bs=4K count=8 seek=40 conv=notrunc status=none
  head -c 700K /dev/urandom > "$m/B/late"
  sync
}

make_image() {
  local img=$1 ns=$2 m=$3 i
  mkimg "$img" 1G -n "$ns"
  qg_mount "$img" "$m" noatime
  # Before the enable: P and a top-level file (not counted; P's later changes are).
  btrfs subvolume create "$m/P" >/dev/null
  head -c 3M /dev/urandom > "$m/P/old1"
  head -c 1M /dev/urandom > "$m/top_old"
  for i in $(seq 1 200); do head -c $((i * 37 % 5000 + 100)) /dev/urandom > "$m/P/small$i"; done
  sync
  set +e
  $QUOTA_CTL enable-simple "$m" 2> "$T/enable.err"; local rc=$?
  set -e
  if [ $rc -ne 0 ]; then
    qg_umount "$m"
    [ $rc -eq 3 ] && skip "the kernel ($(uname -r)) refuses simple quotas: $(cat "$T/enable.err")"
    fail "enabling simple quotas: $(cat "$T/enable.err")"
  fi
  btrfs subvolume create "$m/A" >/dev/null
  btrfs subvolume create "$m/B" >/dev/null
  for i in $(seq 1 1500); do head -c $((i * 97 % 9000 + 1)) /dev/urandom > "$m/A/f$i"; done
  head -c 4M /dev/urandom > "$m/A/big"
  head -c 2M /dev/urandom > "$m/B/bfile"
  head -c 1M /dev/urandom > "$m/B/gone"
  sync
  btrfs subvolume snapshot "$m/A" "$m/S" >/dev/null
  cp --reflink=always "$m/A/big" "$m/B/big.reflink"                    # owner stays A
  dd if=/dev/urandom of="$m/A/big" bs=4K count=16 seek=10 conv=notrunc status=none
  rm -f "$m"/A/f1* "$m/B/gone"
  head -c 500K /dev/urandom > "$m/S/snapnew"
  rm -f "$m"/S/f2*
  dd if=/dev/urandom of="$m/P/old1" bs=4K count=8 seek=3 conv=notrunc status=none
  rm -f "$m"/P/small5*
  head -c 300K /dev/urandom > "$m/P/new1"
  btrfs subvolume create "$m/D" >/dev/null
  head -c 1M /dev/urandom > "$m/D/d1"
  sync
  cp --reflink=always "$m/D/d1" "$m/A/from_d"                         # owner D, then D is deleted
  btrfs subvolume delete "$m/D" >/dev/null
  btrfs subvolume sync "$m" >/dev/null
  local A B
  A=$(btrfs inspect-internal rootid "$m/A"); B=$(btrfs inspect-internal rootid "$m/B")
  btrfs qgroup create 1/100 "$m"
  btrfs qgroup assign "0/$A" 1/100 "$m" >/dev/null
  btrfs qgroup assign "0/$B" 1/100 "$m" >/dev/null
  sync
}

scenario() {
  local ns=$1 img="$T/sq-$1.img" m="$T/mnt-$1"
  echo "== nodesize $ns"
  make_image "$img" "$ns" "$m"
  files_sum "$m" "$T/files-$ns.sum"
  squota_truth "$m" "$T/truth-$ns.json"
  qg_umount "$m"
  sed 's/^/    /' "$T/truth-$ns.json.txt"

  # verify and show against the kernel
  verify_equals "$img" "$T/truth-$ns.json" "$ns-fresh"
  check "mode simple and enable_gen in verify's JSON" python3 - "$T/verify-$ns-fresh.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["status"]
assert s["mode"] == "simple" and isinstance(s["enable_gen"], int) and s["enable_gen"] > 0, s
assert s["flags"] & 8, s                    # SIMPLE_MODE
st = j["stats"]
assert st["extents_before_enable_gen"] > 0 and st["data_extents"] > 0 and st["tree_blocks"] > 0, st
for r in j["qgroups"]:
    c = r["computed"]
    assert c["referenced"] == c["exclusive"], r
PY
  run_rc "$T/verify-$ns.txt" "$FSCTL" -v qgroup verify "$img"
  check "text: status line names simple quotas" grep -q "simple quotas from generation [0-9]" "$T/verify-$ns.txt"
  run_rc "$T/show-$ns.json" "$FSCTL" --format json qgroup show "$img"
  check "show exits 0 (rc $RC)" [ "$RC" -eq 0 ]
  check "show = kernel's list" python3 "$QG" check-show "$T/show-$ns.json" "$T/truth-$ns.json"
  check "show says mode simple, D a space holder" python3 -c '
import json,sys
j = json.load(open(sys.argv[1]))
assert j["status"]["mode"] == "simple", j["status"]
assert [r["qgroupid"] for r in j["qgroups"] if r["squota_space_holder"]] == ["0/260"], j["qgroups"]' "$T/show-$ns.json"
  "$FSCTL" qgroup show --raw "$img" > "$T/show-$ns.txt"
  check "show text labels D <squota space holder>" grep -q "^0/260 .*<squota space holder>" "$T/show-$ns.txt"
  check "btrfs check (progs >= 6.7 when present)" progs_check "$img"
  cp --sparse=always "$img" "$T/pristine-$ns.img"

  # an edited QGROUP_INFO: found, repaired, the kernel agrees
  local A LEAF OFF RFER EXCL
  A=$(python3 -c 'import json,sys; print(min(int(q.split("/")[1]) for q,v in json.load(open(sys.argv[1]))["qgroups"].items() if v["path"] == "A"))' "$T/truth-$ns.json")
  read -r LEAF OFF RFER EXCL < <("$FSCTL" inspect dump-tree --format json -t quota "$img" | python3 -c '
import json,sys
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        if it["key"]["type_name"] == "QGROUP_INFO" and it["key"]["offset"] == int(sys.argv[1]):
            print(b["bytenr"], 101 + it["itemoff"], it["data"]["rfer"], it["data"]["excl"])' "$A")
  [ -n "$LEAF" ] || fail "no QGROUP_INFO for 0/$A"
  $EDIT setu64 "$img" "$LEAF" $((OFF + 8)) $((RFER + 1048576)) >/dev/null
  $EDIT setu64 "$img" "$LEAF" $((OFF + 24)) $((EXCL + 1048576)) >/dev/null
  run_rc "$T/damaged-$ns.txt" "$FSCTL" qgroup verify "$img"
  check "edited 0/$A: verify exits 1 (rc $RC)" [ "$RC" -eq 1 ]
  check "edited 0/$A: named as differing" grep -q "^0/$A .*differs" "$T/damaged-$ns.txt"
  check "edited 0/$A: nothing else differs" [ "$(grep -c differs "$T/damaged-$ns.txt")" -eq 1 ]
  # A crash after every write request of the repair leaves the edited or the
  # repaired filesystem, and a rerun finishes (16K only: the same engine).
  if [ "$ns" = 16384 ]; then
    local n=1 st
    while :; do
      cp --sparse=always "$img" "$T/crash.img"
      run_rc "$T/crash.out" env FSCTL_FAIL_AFTER_WRITES=$n "$FSCTL" -q qgroup verify --repair "$T/crash.img"
      [ "$RC" -eq 0 ] && break
      [ "$RC" -eq 86 ] || fail "crash run $n: exit $RC, expect the fail point's 86"
      run_rc "$T/crash.json" "$FSCTL" --format json qgroup verify "$T/crash.img"   # exit 1 in the old state
      st=$(python3 -c '
import json,sys
r=[r for r in json.load(open(sys.argv[1]))["qgroups"] if r["qgroupid"]==sys.argv[2]][0]["ondisk"]["referenced"]
print("old" if r == int(sys.argv[3]) else "new" if r == int(sys.argv[4]) else "neither %d" % r)' "$T/crash.json" "0/$A" $((RFER + 1048576)) "$RFER")
      case "$st" in old | new) ;; *) fail "crash at write $n: 0/$A is $st";; esac
      progs_check "$T/crash.img" > /dev/null || [ "$st" = old ] || fail "crash at write $n ($st): btrfs check"
      "$FSCTL" -q qgroup verify --repair "$T/crash.img" >/dev/null || fail "rerun after crash $n"
      "$FSCTL" -q qgroup verify "$T/crash.img" >/dev/null || fail "verify after crash $n and rerun"
      n=$((n + 1))
      [ $n -lt 100 ] || fail "repair never finished"
    done
    echo "  ok: repair crashed after each of its $((n - 1)) write requests: old or new state, rerun completes"
    rm -f "$T/crash.img"
  fi
  run_rc "$T/repair-$ns.json" "$FSCTL" --format json qgroup verify --repair "$img"
  check "repair exits 0 (rc $RC)" [ "$RC" -eq 0 ]
  check "repair rewrote one qgroup" python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["repair"]; assert r["wrote"] and r["qgroups_updated"] == 1, r' "$T/repair-$ns.json"
  verify_equals "$img" "$T/truth-$ns.json" "$ns-repaired"
  check "repaired: btrfs check" progs_check "$img"
  qg_mount "$img" "$m" noatime
  squota_truth "$m" "$T/kernel-repaired-$ns.json"
  check "repaired: kernel shows the true numbers" python3 "$QG" check-show "$T/show-$ns.json" "$T/kernel-repaired-$ns.json"
  kernel_churn "$m"
  squota_truth "$m" "$T/kernel-repaired-churn-$ns.json"
  qg_umount "$m"
  verify_equals "$img" "$T/kernel-repaired-churn-$ns.json" "$ns-repaired-churn"

  # balance -m and convert keep every number and owner
  local job
  for job in balance convert; do
    cp --sparse=always "$T/pristine-$ns.img" "$img"
    "$FSCTL" --format json qgroup show "$img" > "$T/before-$job-$ns.json"
    "$FSCTL" inspect dump-tree --format json -t extent "$img" > "$T/extent-before-$job-$ns.json"
    if [ $job = balance ]; then
      run_rc "$T/$job-$ns.json" "$FSCTL" --format json balance -m "$img"
    else
      run_rc "$T/$job-$ns.json" "$FSCTL" --format json convert --bg-tree "$img"
    fi
    check "$job: exits 0 (rc $RC: $(head -c 300 "$T/$job-$ns.json.err"))" [ "$RC" -eq 0 ]
    if [ $job = convert ]; then
      run_rc "$T/$job-back-$ns.json" "$FSCTL" --format json convert --no-bg-tree "$img"
      check "convert --no-bg-tree: exits 0 (rc $RC)" [ "$RC" -eq 0 ]
      run_rc "$T/$job-again-$ns.json" "$FSCTL" --format json convert --bg-tree "$img"
      check "convert --bg-tree again: exits 0 (rc $RC)" [ "$RC" -eq 0 ]
    fi
    verify_equals "$img" "$T/truth-$ns.json" "$ns-$job"
    "$FSCTL" --format json qgroup show "$img" > "$T/after-$job-$ns.json"
    check "$job: on-disk numbers unchanged" python3 - "$T/before-$job-$ns.json" "$T/after-$job-$ns.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["qgroups"] for p in sys.argv[1:3])
strip = lambda rows: {r["qgroupid"]: (r["referenced"], r["exclusive"]) for r in rows}
assert strip(a) == strip(b), (strip(a), strip(b))
PY
    "$FSCTL" inspect dump-tree --format json -t extent "$img" > "$T/extent-after-$job-$ns.json"
    check "$job: owner refs and extent generations unchanged" python3 - "$T/extent-before-$job-$ns.json" "$T/extent-after-$job-$ns.json" <<'PY'
import json, sys
def owners(p):
    out = {}
    for b in json.load(open(p))["trees"][0]["blocks"]:
        for it in b.get("items", []):
            k = it["key"]
            if k["type_name"] != "EXTENT_ITEM":
                continue
            d = it["data"]
            refs = d.get("inline_refs", [])
            own = [r.get("root") for r in refs if r.get("type") == "EXTENT_OWNER_REF"]
            out[k["objectid"]] = (d.get("generation"), tuple(own))
    return out
a, b = owners(sys.argv[1]), owners(sys.argv[2])
assert a == b, "data extents or their owners changed"
assert any(v[1] for v in a.values()), "no EXTENT_OWNER_REF seen in the extent tree dump"
PY
    check "$job: btrfs check" progs_check "$img"
    qg_mount "$img" "$m" noatime
    files_sum "$m" "$T/files-$job-$ns.sum"
    squota_truth "$m" "$T/kernel-$job-$ns.json"
    check "$job: kernel mounts with the same numbers" python3 "$QG" check-show "$T/show-$ns.json" "$T/kernel-$job-$ns.json"
    check "$job: every file's sha256 unchanged" diff -q "$T/files-$ns.sum" "$T/files-$job-$ns.sum"
    kernel_churn "$m"
    squota_truth "$m" "$T/kernel-$job-churn-$ns.json"
    qg_umount "$m"
    verify_equals "$img" "$T/kernel-$job-churn-$ns.json" "$ns-$job-churn"
    check "$job then kernel writes: btrfs check" progs_check "$img"
  done
  rm -f "$img" "$T/pristine-$ns.img"
}

scenario 4096
scenario 16384
qg_finish
