#!/usr/bin/env bash
# 030-qgroup-fixtures: fsctl qgroup verify/show on every quota image of
# ../shared/fixtures, plus fixtures-bgt/many-qgroups-16k (704 qgroups, a quota
# tree of 7 leaves, 220 relations) and fixtures-bgt/bgt-native-16k (block
# group tree). (bgt-*-4k are 260 GiB sparse images: too slow to unpack here.)
# Proves, per image: every computed rfer/excl equals the kernel's numbers after
# a rescan (quota.kernel_after_rescan), the compressed twins equal the plain
# numbers, verify exits 0 with every row "ok"; `qgroup show --format json`
# equals the QGROUP_INFO items (all four numbers, quota.ondisk), the limits,
# parents/children and level-0 paths of `btrfs qgroup show -pcre`; the text of
# `show --raw` carries the same numbers and --sort orders them.
# The -corrupt fixture: exactly 0/257 "differs", on-disk = corruption.after,
# computed = corruption.before, exit 1, and `btrfs check --readonly
# --qgroup-report` reports the same qgroup with the same two numbers.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../039-qgroup-lib/qg.sh"
[ -d "$SHARED/fixtures" ] || skip "no ../shared/fixtures here: the fixture part cannot run"

images=()
for j in "$SHARED"/fixtures/*.json "$SHARED"/fixtures-bgt/many-qgroups-16k.json \
         "$SHARED"/fixtures-bgt/bgt-native-16k.json; do
  [ -f "$j" ] || continue
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); q=j.get("quota") or {}; sys.exit(0 if q.get("enabled") and q.get("kernel_after_rescan") else 1)' "$j" || continue
  images+=("$j")
done
[ "${#images[@]}" -gt 0 ] || skip "no quota fixtures found in $SHARED"
[ -f "$SHARED/fixtures-bgt/many-qgroups-16k.json" ] || echo "NOTE: fixtures-bgt/many-qgroups-16k missing: not tested"

for j in "${images[@]}"; do
  name=$(basename "$j" .json)
  dir=$(dirname "$j")
  echo "== $name"
  img="$T/$name.img"
  unpack_fixture "$dir/$name.img.zst" "$img" || { echo "  (image $name.img.zst missing, skipped)"; continue; }
  python3 "$QG" truth-from-fixture "$j" > "$T/$name.truth.json"
  python3 "$QG" truth-from-fixture --ondisk "$j" > "$T/$name.ondisk.json"   # what show prints
  run_rc "$T/$name.verify.json" "$FSCTL" --format json qgroup verify "$img"; vrc=$RC
  run_rc "$T/$name.show.json" "$FSCTL" --format json qgroup show "$img"; src=$RC
  check "show exits 0 (rc $src)" [ "$src" -eq 0 ]
  check "show = on-disk items, limits, relations, paths" python3 "$QG" check-show "$T/$name.show.json" "$T/$name.ondisk.json" --fixture "$j"
  check "computed = kernel after rescan (every qgroup)" python3 "$QG" check-computed "$T/$name.verify.json" "$T/$name.truth.json"
  if python3 -c 'import json,sys; sys.exit(0 if "corruption" in json.load(open(sys.argv[1])) else 1)' "$j"; then
    check "verify exits 1 on the edited qgroup (rc $vrc)" [ "$vrc" -eq 1 ]
    check "exactly the edited qgroup differs, with both numbers" python3 - "$T/$name.verify.json" "$j" <<'PY'
import json, sys
v = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))["corruption"]
bad = [r for r in v["qgroups"] if r["status"] != "ok"]
assert [r["qgroupid"] for r in bad] == [c["qgroupid"]], bad
r = bad[0]
assert r["status"] == "differs", r
od, cp, a, b = r["ondisk"], r["computed"], c["after"], c["before"]
assert (od["referenced"], od["referenced_compressed"], od["exclusive"], od["exclusive_compressed"]) == (a["rfer"], a["rfer_cmpr"], a["excl"], a["excl_cmpr"]), (od, a)
assert (cp["referenced"], cp["exclusive"]) == (b["rfer"], b["excl"]), (cp, b)
assert r["diff"] == {"referenced": b["rfer"] - a["rfer"], "exclusive": b["excl"] - a["excl"]}, r["diff"]
assert v["mismatches"] == 1 and v["ok"] is False and v["differences_expected"] is False, v
PY
    run_rc "$T/$name.verify.txt" "$FSCTL" qgroup verify "$img"
    check "text verify names 0/257 as differs, exit 1" bash -c "[ $RC -eq 1 ] && grep -Eq '^0/257 +differs +7413760 +6365184 +-1048576 +319488 +327680 +8192' '$T/$name.verify.txt' && [ \$(grep -c differs '$T/$name.verify.txt') -eq 1 ]"
    set +e; btrfs check --readonly --qgroup-report "$img" > "$T/$name.check.txt" 2>&1; crc=$?; set -e
    check "btrfs check --qgroup-report agrees (rc $crc, same qgroup, same numbers)" python3 - "$T/$name.check.txt" "$T/$name.verify.json" "$crc" <<'PY'
import json, re, sys
txt = open(sys.argv[1]).read(); v = json.load(open(sys.argv[2])); rc = int(sys.argv[3])
assert rc == 1, rc
diff = re.findall(r"Counts for qgroup id: (\S+) are different", txt)
assert diff == ["0/257"], diff
# every qgroup: progs' "our" = fsctl computed, progs' "disk" = fsctl on-disk
blocks = re.findall(r"Counts for qgroup id: (\S+).*?\nour:\s+referenced (\d+).*?\ndisk:\s+referenced (\d+).*?(?:\ndiff:[^\n]*)?\nour:\s+exclusive (\d+).*?\ndisk:\s+exclusive (\d+)", txt, re.S)
rows = {r["qgroupid"]: r for r in v["qgroups"]}
assert len(blocks) == len(rows), (len(blocks), len(rows))
for q, our_r, disk_r, our_e, disk_e in blocks:
    r = rows[q]
    assert (r["computed"]["referenced"], r["computed"]["exclusive"]) == (int(our_r), int(our_e)), (q, r)
    assert (r["ondisk"]["referenced"], r["ondisk"]["exclusive"]) == (int(disk_r), int(disk_e)), (q, r)
PY
  else
    check "verify exits 0 (rc $vrc)" [ "$vrc" -eq 0 ]
    check "every row ok" python3 "$QG" check-ok "$T/$name.verify.json"
  fi
  # text output of show: same numbers as the kernel's `show --raw`; --sort orders them
  run_rc "$T/$name.show.txt" "$FSCTL" qgroup show --raw --sort -rfer "$img"
  check "text show --raw --sort -rfer (rc $RC): numbers and order" python3 - "$T/$name.show.txt" "$T/$name.ondisk.json" "$RC" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines(); t = json.load(open(sys.argv[2]))["qgroups"]
assert int(sys.argv[3]) == 0
assert lines[0].split()[:3] == ["Qgroupid", "Referenced", "Exclusive"], lines[0]
rows = [l.split() for l in lines[2:] if l.strip()]
assert {r[0] for r in rows} == set(t), "qgroup sets differ"
for r in rows:
    assert (int(r[1]), int(r[2])) == (t[r[0]]["rfer"], t[r[0]]["excl"]), r
    lim = lambda x: None if x == "none" else int(x)
    assert (lim(r[3]), lim(r[4])) == (t[r[0]]["max_rfer"], t[r[0]]["max_excl"]), r
rf = [int(r[1]) for r in rows]
assert rf == sorted(rf, reverse=True), "not sorted by -rfer"
PY
  rm -f "$img"
done

# Human-readable sizes by default (progs style, base 1024, two decimals) on one image.
if [ -f "$SHARED/fixtures/quota-16k-xxhash-dup.img.zst" ]; then
  unpack_fixture "$SHARED/fixtures/quota-16k-xxhash-dup.img.zst" "$T/h.img"
  run_rc "$T/h.txt" "$FSCTL" qgroup show --sort excl "$T/h.img"
  check "human-readable show (rc $RC)" bash -c "[ $RC -eq 0 ] && grep -Eq '^0/5 +104.00KiB +104.00KiB +none +none' '$T/h.txt' && grep -Eq '^0/258 .* 200.00MiB ' '$T/h.txt'"
  check "--sort excl ascending" python3 -c '
import sys
rows=[l.split() for l in open(sys.argv[1]).read().splitlines()[2:] if l.strip()]
u={"B":1,"KiB":1024,"MiB":1024**2,"GiB":1024**3}
def v(s):
    for k in ("KiB","MiB","GiB","B"):
        if s.endswith(k): return float(s[:-len(k)])*u[k]
e=[v(r[2]) for r in rows]; sys.exit(0 if e==sorted(e) else 1)' "$T/h.txt"
  rm -f "$T/h.img"
fi
qg_finish
