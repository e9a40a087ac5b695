#!/usr/bin/env bash
# 032-qgroup-status: qgroup states the kernel leaves behind, each with the
# right value from the kernel (finish the work on a copy: mount, `btrfs
# subvolume sync`, `btrfs quota rescan -w`, `btrfs qgroup show --raw -pcre`).
# One 4K base image (quota on, consistent): subvolume big (8000 files), a
# snapshot of it, subvolume doomed (12000 files, one reflinked into big),
# qgroup 1/100 = {big, snap}.
#  (a) INCONSISTENT: `btrfs qgroup assign --no-rescan` of a subvolume with
#      shared extents. verify: differences_expected true, real differences
#      listed, exit 0; computed = kernel after rescan.
#  (b) RESCAN in progress: `btrfs quota rescan` then unmount at once (the
#      kernel pauses the rescan and keeps flag + progress on disk). verify:
#      differences_expected true, exit 0; computed = kernel after the rescan.
#  (c) a level-0 qgroup whose subvolume is gone. Kernel 6.18 deletes the
#      qgroup of a dropped subvolume itself and refuses `qgroup create 0/9999`
#      for a missing subvolume (EINVAL). The test tries both (create 0/9999;
#      delete a subvolume while quota is inconsistent) and skips (c) with this
#      reason when no stale qgroup reaches the disk. verify: the row has
#      subvol_exists false, computed 0/0, status "stale"/"differs" (its
#      on-disk numbers are the old ones), show path "<stale>"; kernel after
#      rescan: the qgroup is gone (= 0), every other number equal.
#  (d) drop in progress: delete doomed, then remount read-only while the
#      cleaner is dropping it (root item refs 0, drop_progress set). The
#      kernel accounts each dropped part at commit, so its numbers on the
#      frozen image are the truth for that image: computed = those for every
#      qgroup (the dropping one included), verify exits 0. After the drop is
#      finished on a copy (subvolume sync + rescan), fsctl on the copy = kernel,
#      and for live level-0 qgroups the frozen rfer equals the final rfer
#      (rfer does not depend on other subvolumes), the frozen excl is <= the
#      final excl (extents shared only with the dropping part become
#      exclusive); the dropping subvolume's own qgroup is gone after cleanup.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../039-qgroup-lib/qg.sh"
need_mount

mkfiles() {
  python3 - "$@" <<'PY'
import os, random, sys
d, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
blob = rnd.randbytes(8192)
for i in range(n):
    sub = os.path.join(d, f"d{i // 500:03d}")
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, f"f{i:05d}"), "wb") as f:
        f.write(blob[: 2500 + (i * 37) % 5000])   # > max_inline: one data extent each
PY
}
status_flags() { btrfs inspect-internal dump-tree -t quota "$1" > "$T/dump.txt"; awk '/QGROUP_STATUS/{getline; print; exit}' "$T/dump.txt"; }
copy() { cp --sparse=always "$1" "$2"; }
# truth_on_copy IMG OUT: the kernel's numbers once everything is finished.
truth_on_copy() {
  copy "$1" "$T/copy.img"
  qg_mount "$T/copy.img" "$T/mc"
  btrfs subvolume sync "$T/mc" >/dev/null
  kernel_truth "$T/mc" "$2"
  qg_umount "$T/mc"
  rm -f "$T/copy.img"
}
jq_() { python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

echo "== base image"
base="$T/base.img"
mkimg "$base" 1G -n 4096
qg_mount "$base" "$T/m"
btrfs quota enable "$T/m"
btrfs subvolume create "$T/m/big" >/dev/null
btrfs subvolume create "$T/m/doomed" >/dev/null
mkfiles "$T/m/big" 8000 1
mkfiles "$T/m/doomed" 12000 2
head -c 2M /dev/urandom > "$T/m/doomed/shared.bin"
cp --reflink=always "$T/m/doomed/shared.bin" "$T/m/big/from-doomed.bin"
btrfs subvolume snapshot "$T/m/big" "$T/m/snap" >/dev/null
echo "changed" > "$T/m/snap/d000/f00001"
BIG=$(btrfs inspect-internal rootid "$T/m/big"); SNAP=$(btrfs inspect-internal rootid "$T/m/snap")
DOOMED=$(btrfs inspect-internal rootid "$T/m/doomed")
btrfs qgroup create 1/100 "$T/m"
btrfs qgroup assign --no-rescan "0/$BIG" 1/100 "$T/m" >/dev/null 2>&1 || true
btrfs qgroup assign --no-rescan "0/$SNAP" 1/100 "$T/m" >/dev/null 2>&1 || true
btrfs quota rescan -w "$T/m" >/dev/null
qg_umount "$T/m"
echo "  subvolumes: big $BIG, snap $SNAP, doomed $DOOMED; status: $(status_flags "$base")"
run_rc "$T/base.verify.json" "$FSCTL" --format json qgroup verify "$base"
check "base image: verify exits 0 (rc $RC), all ok" bash -c "[ $RC -eq 0 ] && python3 '$QG' check-ok '$T/base.verify.json'"

# ---------------------------------------------------------------- (a)
echo "== (a) inconsistent flag"
copy "$base" "$T/a.img"
qg_mount "$T/a.img" "$T/m"
btrfs subvolume snapshot "$T/m/doomed" "$T/m/doomed.snap" >/dev/null   # shares all of doomed
btrfs qgroup create 1/200 "$T/m"
DS=$(btrfs inspect-internal rootid "$T/m/doomed.snap")
btrfs qgroup assign --no-rescan "0/$DOOMED" 1/200 "$T/m" >/dev/null 2>&1 || true
head -c 1M /dev/urandom > "$T/m/doomed.snap/new.bin"
btrfs qgroup assign --no-rescan "0/$DS" 1/200 "$T/m" >/dev/null 2>&1 || true
qg_umount "$T/m"
echo "  status: $(status_flags "$T/a.img")"
run_rc "$T/a.verify.json" "$FSCTL" --format json qgroup verify "$T/a.img"
truth_on_copy "$T/a.img" "$T/a.truth.json"
check "(a) status item has INCONSISTENT" [ "$(jq_ "$T/a.verify.json" 'v["status"]["inconsistent"]')" = True ]
check "(a) differences reported as expected, exit 0 (rc $RC)" bash -c "[ $RC -eq 0 ] && python3 -c '
import json,sys; v=json.load(open(sys.argv[1]))
assert v[\"differences_expected\"] is True and v[\"ok\"] is True, v[\"differences_expected\"]
assert \"inconsistent\" in v[\"expected_reason\"], v[\"expected_reason\"]
bad=[r[\"qgroupid\"] for r in v[\"qgroups\"] if r[\"status\"]!=\"ok\"]
assert v[\"mismatches\"]==len(bad)>0, (v[\"mismatches\"], bad)   # the test has real differences
print(\"  differing (expected):\", bad)' '$T/a.verify.json'"
check "(a) computed = kernel after rescan" python3 "$QG" check-computed "$T/a.verify.json" "$T/a.truth.json"
run_rc "$T/a.verify.txt" "$FSCTL" qgroup verify "$T/a.img"
check "(a) text says the differences are expected, exit 0" bash -c "[ $RC -eq 0 ] && grep -q 'differences are expected' '$T/a.verify.txt' && grep -q inconsistent '$T/a.verify.txt'"
rm -f "$T/a.img"

# ---------------------------------------------------------------- (b)
echo "== (b) rescan in progress"
got_b=0
for try in 1 2 3; do
  copy "$base" "$T/b.img"
  qg_mount "$T/b.img" "$T/m"
  btrfs quota rescan "$T/m" >/dev/null
  qg_umount "$T/m"          # close_ctree pauses the rescan worker; flag and progress stay on disk
  if status_flags "$T/b.img" | grep_q SCANNING; then got_b=1; break; fi
  echo "  try $try: the rescan finished before the unmount ($(status_flags "$T/b.img"))"
done
if [ $got_b -eq 1 ]; then
  echo "  status: $(status_flags "$T/b.img")"
  run_rc "$T/b.verify.json" "$FSCTL" --format json qgroup verify "$T/b.img"
  truth_on_copy "$T/b.img" "$T/b.truth.json"
  check "(b) rescan_running, differences expected, exit 0 (rc $RC)" bash -c "[ $RC -eq 0 ] && python3 -c '
import json,sys; v=json.load(open(sys.argv[1]))
assert v[\"status\"][\"rescan_running\"] is True and v[\"status\"][\"rescan\"] not in (0, 2**64-1), v[\"status\"]
assert v[\"differences_expected\"] is True and v[\"ok\"] is True and \"rescan\" in v[\"expected_reason\"], v[\"expected_reason\"]
print(\"  rescan progress\", v[\"status\"][\"rescan\"], \"- differing (expected):\", [r[\"qgroupid\"] for r in v[\"qgroups\"] if r[\"status\"]!=\"ok\"])' '$T/b.verify.json'"
  check "(b) computed = kernel after the rescan" python3 "$QG" check-computed "$T/b.verify.json" "$T/b.truth.json"
  run_rc "$T/b.show.txt" "$FSCTL" qgroup show "$T/b.img"
  check "(b) show warns that numbers are being rescanned, exit 0" bash -c "[ $RC -eq 0 ] && grep -q 'rescanned' '$T/b.show.txt.err'"
else
  echo "SKIP (b): could not freeze a rescan in 3 tries (the kernel finished it before unmount)"
fi
rm -f "$T/b.img"

# ---------------------------------------------------------------- (c)
echo "== (c) qgroup of a deleted subvolume"
copy "$base" "$T/c.img"
qg_mount "$T/c.img" "$T/m"
if btrfs qgroup create 0/9999 "$T/m" 2>/dev/null; then
  echo "  the kernel accepted qgroup create 0/9999 (a qgroup without a subvolume)"
else
  echo "  the kernel refuses qgroup create 0/9999 for a missing subvolume (EINVAL)"
fi
btrfs subvolume create "$T/m/gone" >/dev/null
GONE=$(btrfs inspect-internal rootid "$T/m/gone")
dd if=/dev/urandom of="$T/m/gone/x" bs=64k count=2 status=none
btrfs qgroup create 1/300 "$T/m"
btrfs qgroup assign --no-rescan "0/$SNAP" 1/300 "$T/m" >/dev/null 2>&1 || true   # shared extents: INCONSISTENT
sync
btrfs subvolume delete -c "$T/m/gone" >/dev/null
btrfs subvolume sync "$T/m" >/dev/null
qg_umount "$T/m"
echo "  status: $(status_flags "$T/c.img"); deleted subvolume $GONE"
run_rc "$T/c.verify.json" "$FSCTL" --format json qgroup verify "$T/c.img"
stale_ids=$(jq_ "$T/c.verify.json" '",".join(r["qgroupid"] for r in v["qgroups"] if r["qgroupid"].startswith("0/") and not r["subvol_exists"])')
if [ -z "$stale_ids" ]; then
  echo "SKIP (c): this kernel ($(uname -r)) leaves no qgroup without a subvolume: it refuses 'qgroup create 0/9999'"
  echo "          and removes 0/$GONE once the subvolume is dropped (btrfs_qgroup_cleanup_dropped_subvolume); a <stale>"
  echo "          row seen in 'qgroup show' right after 'subvolume sync' is gone by the unmount. Covered instead:"
  echo "          the qgroup of a subvolume being dropped (kernel path <stale>) in (d)."
else
  truth_on_copy "$T/c.img" "$T/c.truth.json"
  echo "  stale on disk: $stale_ids; kernel after rescan: $(jq_ "$T/c.truth.json" '" ".join(q for q in v["qgroups"])')"
  check "(c) stale row: subvol_exists false, computed 0/0, status stale/differs, exit 0 (rc $RC)" bash -c "[ $RC -eq 0 ] && python3 -c '
import json,sys; v=json.load(open(sys.argv[1])); ids=sys.argv[2].split(\",\")
for r in v[\"qgroups\"]:
    if r[\"qgroupid\"] in ids:
        assert r[\"status\"] in (\"stale\",\"differs\") and not r[\"subvol_exists\"], r
        assert r[\"computed\"][\"referenced\"]==0 and r[\"computed\"][\"exclusive\"]==0, r
        print(\"  \", r[\"qgroupid\"], r[\"status\"], \"on-disk\", r[\"ondisk\"][\"referenced\"], r[\"ondisk\"][\"exclusive\"], \"computed 0 0\")
assert v[\"differences_expected\"] is True and v[\"ok\"] is True' '$T/c.verify.json' '$stale_ids'"
  # the kernel removes the stale qgroup during the rescan: absent = 0 bytes
  check "(c) computed = kernel after rescan (stale qgroup: kernel dropped it, fsctl says 0)" python3 "$QG" check-computed "$T/c.verify.json" "$T/c.truth.json" --extra-ok "$stale_ids"
  run_rc "$T/c.show.json" "$FSCTL" --format json qgroup show "$T/c.img"
  check "(c) show: path <stale>" bash -c "[ $RC -eq 0 ] && python3 -c '
import json,sys; v=json.load(open(sys.argv[1])); ids=sys.argv[2].split(\",\")
assert all(r[\"path\"]==\"<stale>\" for r in v[\"qgroups\"] if r[\"qgroupid\"] in ids)' '$T/c.show.json' '$stale_ids'"
fi
rm -f "$T/c.img"

# ---------------------------------------------------------------- (d)
echo "== (d) snapshot deleted, drop in progress"
got_d=0
for delay in 0.2 0.1 0.4 0.05 0.8; do
  copy "$base" "$T/d.img"
  qg_mount "$T/d.img" "$T/m"
  btrfs subvolume delete -c "$T/m/doomed" >/dev/null
  sleep "$delay"
  mount -o remount,ro "$T/m"      # the cleaner stops dropping at its next checkpoint, saving drop_progress
  btrfs qgroup show --raw -pcre "$T/m" > "$T/d.frozen.txt"
  qg_umount "$T/m"
  btrfs inspect-internal dump-tree -t root "$T/d.img" > "$T/d.root.txt"
  drop=$(awk -v id="$DOOMED" '$0 ~ "key \\(" id " ROOT_ITEM"{f=1} f && /drop_progress/{print $3, $4, $5; exit}' "$T/d.root.txt")
  refs=$(awk -v id="$DOOMED" '$0 ~ "key \\(" id " ROOT_ITEM"{f=1} f && / refs /{for(i=1;i<=NF;i++) if($i=="refs") print $(i+1); exit}' "$T/d.root.txt")
  echo "  delay $delay: root item refs '${refs}' drop_progress '${drop}'"
  if [ "$refs" = 0 ] && [ -n "$drop" ] && [ "${drop%% *}" != "(0" ]; then got_d=1; break; fi
done
if [ $got_d -eq 1 ]; then
  echo "  status: $(status_flags "$T/d.img")"
  python3 "$QG" truth-from-progs-text "$T/d.frozen.txt" > "$T/d.frozen.json"
  sed 's/^/    /' "$T/d.frozen.txt" | tr -d '\0'
  run_rc "$T/d.verify.json" "$FSCTL" --format json qgroup verify "$T/d.img"
  check "(d) verify exits 0 (rc $RC), every row ok (on-disk = computed)" bash -c "[ $RC -eq 0 ] && python3 '$QG' check-ok '$T/d.verify.json' && [ \$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"status\"][\"inconsistent\"])' '$T/d.verify.json') = False ]"
  check "(d) verify marks 0/$DOOMED subvol_dropping (its numbers change when the drop finishes), no other" python3 -c '
import json,sys; v=json.load(open(sys.argv[1])); d=sys.argv[2]
marked=[r["qgroupid"] for r in v["qgroups"] if r.get("subvol_dropping")]
assert marked == ["0/"+d], marked' "$T/d.verify.json" "$DOOMED"
  check "(d) computed = kernel's numbers of the frozen image (dropping subvolume included)" python3 "$QG" check-computed "$T/d.verify.json" "$T/d.frozen.json"
  run_rc "$T/d.show.json" "$FSCTL" --format json qgroup show "$T/d.img"
  check "(d) show = kernel's frozen list (path of the dropping subvolume <stale>)" python3 "$QG" check-show "$T/d.show.json" "$T/d.frozen.json"
  truth_on_copy "$T/d.img" "$T/d.truth.json"
  copy "$T/d.img" "$T/d2.img"; qg_mount "$T/d2.img" "$T/m"; btrfs subvolume sync "$T/m" >/dev/null; btrfs quota rescan -w "$T/m" >/dev/null; qg_umount "$T/m"
  run_rc "$T/d2.verify.json" "$FSCTL" --format json qgroup verify "$T/d2.img"
  check "(d) after cleanup on a copy: verify exits 0 (rc $RC), computed = kernel" bash -c "[ $RC -eq 0 ] && python3 '$QG' check-computed '$T/d2.verify.json' '$T/d.truth.json'"
  check "(d) frozen vs cleaned: live rfer equal, excl <=, dropping qgroup gone" python3 - "$T/d.verify.json" "$T/d.truth.json" "0/$DOOMED" <<'PY'
import json, sys
v = {r["qgroupid"]: r["computed"] for r in json.load(open(sys.argv[1]))["qgroups"]}
t = json.load(open(sys.argv[2]))["qgroups"]; doomed = sys.argv[3]
assert doomed in v and doomed not in t, "dropping qgroup must be in the frozen image and gone after cleanup"
for q, want in t.items():
    if q.startswith("0/"):
        assert v[q]["referenced"] == want["rfer"], (q, v[q], want)
    assert v[q]["exclusive"] <= want["excl"], (q, v[q], want)
print("  live qgroups compared:", sorted(t))
PY
  rm -f "$T/d2.img"
else
  echo "SKIP (d): could not stop the kernel mid-drop in 5 tries"
fi
rm -f "$T/d.img" "$base"
qg_finish
