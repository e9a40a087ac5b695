#!/usr/bin/env bash
# 069-lagging-supers: a crash inside a commit's superblock writes, after the
# primary and before the copy at 64 MiB (the fail point at the primary's
# write request), leaves copy 1 one generation behind. The filesystem is
# whole (the newest copy wins), and a rerun of the command has nothing to do;
# it must still rewrite the lagging copy (issue 12), as the kernel does at
# its next commit: exit 0, a NOTE naming the copy and the new transaction,
# every copy at one generation, btrfs check --readonly clean, and the next
# run says nothing more. Covered: convert (the crash in its last commit) and
# qgroup verify --repair (the crash in its only commit).
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
need_root

gens() { "$FSCTL" inspect dump-super -a "$1" 2>/dev/null | awk '/^generation/ {printf "%s ", $2}'; }

# crash_where_copy_lags IMG CMD...: the first fail point whose image has the
# job's last state in the primary and an older copy 1; leaves it in $T/lag.img.
crash_last_commit() {
  local img=$1 n=1 g; shift
  local last=""
  while :; do
    cp --sparse=always "$img" "$T/c.img"
    rc=0; FSCTL_FAIL_AFTER_WRITES=$n "$FSCTL" -q "$@" "$T/c.img" > /dev/null 2>&1 || rc=$?
    [ "$rc" = 0 ] && break
    [ "$rc" = 86 ] || fail "$*: exit $rc at fail point $n"
    read -r -a g <<< "$(gens "$T/c.img")"
    [ "${g[0]}" -gt "${g[1]}" ] && { last=$n; cp --sparse=always "$T/c.img" "$T/lag.img"; }
    n=$((n + 1)); [ "$n" -lt 300 ] || fail "$*: never completed"
  done
  [ -n "$last" ] || fail "$*: no fail point left copy 1 behind"
  echo "$* : fail point $last (of $((n - 1)) writes) left copy 1 behind: generations $(gens "$T/lag.img")"
}

expect_refresh() {  # WHAT CMD...
  local what=$1; shift
  "$FSCTL" "$@" "$T/lag.img" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "$what: the rerun failed"; }
  grep -q "^NOTE: .*superblock copy 1 at 67108864 has generation" "$T/err" || { cat "$T/err"; fail "$what: no NOTE naming the lagging copy"; }
  grep -q "^NOTE: rewrote every superblock copy in transaction" "$T/err" || { cat "$T/err"; fail "$what: no NOTE about the rewrite"; }
  read -r -a g <<< "$(gens "$T/lag.img")"
  [ "${g[0]}" = "${g[1]}" ] || fail "$what: copies still at generations ${g[*]}"
  btrfs check --readonly "$T/lag.img" > "$T/check" 2>&1 || { tail "$T/check"; fail "$what: btrfs check"; }
  "$FSCTL" "$@" "$T/lag.img" > "$T/out" 2> "$T/err" || fail "$what: the second rerun failed"
  ! grep -q "rewrote every superblock copy" "$T/err" || fail "$what: rewrote again though nothing lagged"
  echo "$what: the rerun rewrote copy 1 (generations now ${g[*]}), check clean, the next run left it alone"
}

mkimg "$T/a.img" 2G
crash_last_commit "$T/a.img" convert --bg-tree --batch 1
"$FSCTL" convert -n --bg-tree "$T/lag.img" 2>/dev/null | grep_q "^nothing to do" || fail "convert: the lagging image is not converted already"
expect_refresh "convert --bg-tree" convert --bg-tree

mkdir -p "$T/src"; for i in 1 2 3 4 5; do head -c $((i * 3000)) /dev/urandom > "$T/src/f$i"; done
mkimg "$T/q.img" 1G -R quota -r "$T/src"
# 0/5's referenced bytes + 1 MiB, repaired by one commit; its crash at the
# primary leaves copy 1 behind with the repair in the primary.
read -r LEAF OFF RFER < <("$FSCTL" inspect dump-tree --format json -t quota "$T/q.img" | python3 -c '
import json,sys
for b in json.load(sys.stdin)["trees"][0]["blocks"]:
    for it in b.get("items", []):
        if it["key"]["type_name"] == "QGROUP_INFO" and it["key"]["offset"] == 5:
            print(b["bytenr"], 101 + it["itemoff"], it["data"]["rfer"])')
[ -n "$LEAF" ] || fail "no QGROUP_INFO for 0/5"
$EDIT setu64 "$T/q.img" "$LEAF" $((OFF + 8)) $((RFER + 1048576)) >/dev/null
crash_last_commit "$T/q.img" qgroup verify --repair
"$FSCTL" qgroup verify "$T/lag.img" > /dev/null || fail "qgroup: the lagging image does not verify"  # read-only: writes nothing
expect_refresh "qgroup verify --repair" qgroup verify --repair
