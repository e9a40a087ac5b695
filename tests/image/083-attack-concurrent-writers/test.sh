#!/usr/bin/env bash
# 083-attack-concurrent-writers: two fsctl write commands on the same image
# file at once (image files get no O_EXCL). Writer A, `convert --bg-tree`,
# is held right after its write open by the FSCTL_HOLD_AFTER_OPEN hook (it
# creates a file, then waits on a FIFO: synchronized on events, no sleep);
# meanwhile `qgroup verify --repair` must be refused with exit 5 and one
# ERROR line naming the image, writing nothing. Before the lock, the repair
# ran, A committed on top of its stale view, the repair was lost and btrfs
# check failed. Then A finishes, the repair runs, and btrfs check passes.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_root

mkdir -p "$T/src"
for i in $(seq 1 100); do head -c $((i * 97 % 9000 + 1)) /dev/zero | tr '\0' x > "$T/src/f$i"; done
img="$T/a.img"
mkimg "$img" 256M -n 4096 -R quota -r "$T/src"
read -r LEAF OFF RFER < <("$FSCTL" inspect dump-tree --format json -t quota "$img" | python3 -c '
import json,sys
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        if it["key"]["type_name"] == "QGROUP_INFO" and it["key"]["offset"] == 5:
            print(b["bytenr"], 101 + it["itemoff"], it["data"]["rfer"])')
[ -n "$LEAF" ] || fail "no QGROUP_INFO for 0/5"
$EDIT setu64 "$img" "$LEAF" $((OFF + 8)) $((RFER + 1048576)) >/dev/null

# Writer A: convert, held right after its write open (FSCTL_HOLD_AFTER_OPEN:
# it creates $T/hold/opened, then waits for a byte on the FIFO $T/hold/go).
mkdir -p "$T/hold"
mkfifo "$T/hold/go"
FSCTL_HOLD_AFTER_OPEN="$T/hold" "$FSCTL" convert --bg-tree "$img" > "$T/a.out" 2>&1 &
apid=$!
trap 'kill -9 "$apid" 2>/dev/null || true' EXIT  # a failed check does not leave A writing later
# Wait for the event: the file A creates once it holds the image (or A's exit).
while [ ! -e "$T/hold/opened" ]; do
  kill -0 "$apid" 2>/dev/null || fail "the first writer exited before holding the image: $(cat "$T/a.out")"
  read -r -t 0.05 < /dev/zero || true
done
snap "$img"
expect 5 "$FSCTL" qgroup verify --repair "$img"
says "$img"
unchanged "$img"
echo go > "$T/hold/go"
wait "$apid" || fail "the first writer failed: $(cat "$T/a.out")"
# The refused repair is run now that the first writer is done; then the
# filesystem (converted and repaired) passes btrfs check.
"$FSCTL" -q qgroup verify --repair "$img" >/dev/null || fail "repair after the first writer finished"
btrfs check --readonly "$img" > "$T/check" 2>&1 || { cat "$T/check" >&2; fail "btrfs check after both writers"; }
echo "083-attack-concurrent-writers: ok"
