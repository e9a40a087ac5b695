#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# same-results.sh OLD_FSCTL NEW_FSCTL [WORKDIR]: runs every write job with two
# fsctl binaries on copies of the same images and compares the results byte
# for byte (sha256 of every image after the job) and the JSON reports (minus
# timings). A refactoring of the write engine must leave both identical
# (issue 11: "same outputs, same exit codes, same on-disk results"); a
# difference is printed with the scenario and must be explained.
# The input images are made once in WORKDIR/inputs (default
# /tmp/fsctl-same-results) with mkfs.btrfs and, as root where mount -o loop
# works, the kernel (snapshots, quota); later runs reuse them.
set -euo pipefail
OLD=$(realpath "$1"); NEW=$(realpath "$2")
W=${3:-/tmp/fsctl-same-results}
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$W/inputs" "$W/run"
export FSCTL=$NEW FSCTL_SRC=$SRC FSCTL_TEST_TMP=$W/tmp
# shellcheck source=/dev/null
source "$SRC/tests/image/common/lib.sh"
EDIT="python3 $SRC/tests/image/common/btrfs_edit.py"

make_inputs() {
  local I=$W/inputs
  [ -f "$I/done" ] && return 0
  mkimg "$I/fresh16k.img" 256M -n 16384
  mkimg "$I/fresh4k.img" 512M -n 4096 -m single
  mkdir -p "$T/src"
  for i in $(seq 1 300); do head -c $((i * 97 % 9000 + 1)) /dev/urandom > "$T/src/f$i"; done
  rm -f "$I/quota.img"; truncate -s 256M "$I/quota.img"
  mkfs.btrfs -q -f -n 4096 -R quota -r "$T/src" "$I/quota.img" > /dev/null
  # Edited qgroup 0/5 (as test 050 does).
  local leaf off rfer excl
  read -r leaf off rfer excl < <(FSCTL=$OLD "$OLD" inspect dump-tree --format json -t quota "$I/quota.img" | python3 -c '
import json,sys
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        if it["key"]["type_name"] == "QGROUP_INFO" and it["key"]["offset"] == 5:
            print(b["bytenr"], 101 + it["itemoff"], it["data"]["rfer"], it["data"]["excl"])')
  FSCTL=$OLD $EDIT setu64 "$I/quota.img" "$leaf" $((off + 8)) $((rfer + 1048576)) > /dev/null
  if [ -f "$SRC/../shared/fixtures/manybg-4k-single-1g.img.zst" ]; then
    zstd -q -d --sparse -f "$SRC/../shared/fixtures/manybg-4k-single-1g.img.zst" -o "$I/manybg.img"
  fi
  if ( need_mount ) > /dev/null 2>&1; then
    # shellcheck source=/dev/null
    source "$SRC/tests/image/common/balance_image.sh"
    BALANCE_IMAGE_SNAPS=6 make_balance_image "$I/snap4k.img" 4096 800
    BALANCE_IMAGE_SNAPS=3 make_balance_image "$I/snap16k.img" 16384 400
  fi
  touch "$I/done"
}

# run NAME IMAGE ARGS...: the job with each binary on a copy of IMAGE.
declare -a DIFFS=()
N=0
run() {
  local name=$1 img=$W/inputs/$2; shift 2
  [ -f "$img" ] || { echo "skip $name: no input $img"; return 0; }
  local b out=() rcs=()
  for b in OLD NEW; do
    local bin=${!b} dst=$W/run/$name.$b.img rc=0
    cp --sparse=always "$img" "$dst"
    "$bin" --format json "$@" "$dst" > "$W/run/$name.$b.json" 2> "$W/run/$name.$b.err" || rc=$?
    python3 - "$W/run/$name.$b.json" <<'PY'
import json, sys
p = sys.argv[1]
try:
    d = json.load(open(p))
except Exception:
    sys.exit(0)
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in ("seconds", "elapsed", "rate")}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
json.dump(strip(d), open(p, "w"), indent=1, sort_keys=True)
PY
    out+=("$(sha256sum < "$dst" | cut -c1-16)")
    rcs+=("$rc")
  done
  N=$((N + 1))
  local same=yes
  [ "${out[0]}" = "${out[1]}" ] || same="image differs"
  [ "${rcs[0]}" = "${rcs[1]}" ] || same="exit ${rcs[0]} vs ${rcs[1]}"
  # The JSON versioning promise (fsctl(8)): members are only added, so the
  # new report may have members the old one lacks; every old member must be
  # there with the same value.
  python3 - "$W/run/$name.OLD.json" "$W/run/$name.NEW.json" <<'PY' || { [ "$same" = yes ] && same="report differs"; }
import json, sys
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return open(p).read()
def sub(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return all(k in b and sub(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(sub(x, y) for x, y in zip(a, b))
    return a == b
sys.exit(0 if sub(load(sys.argv[1]), load(sys.argv[2])) else 1)
PY
  if [ "$same" = yes ]; then
    echo "same: $name (exit ${rcs[0]}, image ${out[0]})"
    rm -f "$W/run/$name".*.img
  else
    echo "DIFFERENT: $name: $same"
    diff "$W/run/$name.OLD.json" "$W/run/$name.NEW.json" | head -20 || true
    DIFFS+=("$name")
  fi
}

make_inputs
run cv-fwd-16k fresh16k.img convert --bg-tree
run cv-fwd-16k-b1 fresh16k.img convert --bg-tree --batch 1
run cv-fwd-4k-b2 fresh4k.img convert --bg-tree --batch 2
run cv-dry-4k fresh4k.img convert --bg-tree --dry-run
run cv-manybg-b8 manybg.img convert --bg-tree --batch 8
run repair quota.img qgroup verify --repair
run balance-fresh fresh16k.img balance -m
run balance-dup-single fresh16k.img balance -mconvert=single -f
run balance-snap4k snap4k.img balance -m
run balance-snap4k-usage snap4k.img balance -musage=60
run balance-snap4k-dry snap4k.img balance -m --dry-run
run balance-snap16k snap16k.img balance -m --batch 1
run balance-snap16k-single snap16k.img balance -mconvert=single -f
# Backwards, from each forward result of the new binary.
for s in cv-fwd-16k cv-manybg-b8; do
  src=$W/run/$s.back-in.img
  img=fresh16k.img; [ "$s" = cv-manybg-b8 ] && img=manybg.img
  [ -f "$W/inputs/$img" ] || continue
  cp --sparse=always "$W/inputs/$img" "$src"
  "$OLD" -q convert --bg-tree "$src" > /dev/null
  mv "$src" "$W/inputs/$s.converted.img"
  run "$s-back" "$s.converted.img" convert --no-bg-tree --batch 3
done
echo "$N scenarios, ${#DIFFS[@]} different${DIFFS:+: ${DIFFS[*]}}"
[ ${#DIFFS[@]} -eq 0 ]
