#!/usr/bin/env bash
# 071-reservation-enospc: a reservation that cannot be met fails with ENOSPC
# before anything is written (DESIGN.md invariant 4). tests/tools/tree_torture
# plans transactions far larger than a 128 MiB filesystem and reserves them
# both ways the engine can: from counts (Transaction::reserve) and from the
# planned changes replayed on a shadow of the tree (reserve_planned, which
# stops the replay once it exceeds the free space of the filesystem). Each
# must exit 4 with "not enough metadata space ... nothing was written", and
# the image must be byte-identical (lib.sh img_sum) afterwards. A small transaction
# then still commits and btrfs check accepts the result.
source "$(dirname "$0")/../common/lib.sh"
TT=${FSCTL_TREE_TORTURE:-$(dirname "$FSCTL")/tests/tree_torture}
[ -x "$TT" ] || skip "tree_torture not built ($TT)"

mkimg "$T/e.img" 128M -n 4096 -m single
before=$(img_sum "$T/e.img")
expect_nospc() {
  local what=$1; shift
  local rc=0
  "$TT" "$T/e.img" -q "$@" > "$T/out" 2>&1 || rc=$?
  [ $rc -eq 4 ] || { cat "$T/out"; fail "$what: exit $rc, expect 4 (ENOSPC)"; }
  grep -q "not enough metadata space.*nothing was written" "$T/out" || { cat "$T/out"; fail "$what: no ENOSPC message"; }
  [ "$(img_sum "$T/e.img")" = "$before" ] || fail "$what: the image changed"
  echo "$what: $(sed 's/^tree_torture: //' "$T/out")"
}
expect_nospc "counts" --reserve counts --ops 300000 --mix grow
expect_nospc "planned" --reserve planned --ops 150000 --mix grow --sizes large

"$TT" "$T/e.img" -q --seed 5 --ops 200 --transactions 2 > "$T/out" 2>&1 || { cat "$T/out"; fail "a small transaction after the refusals failed"; }
btrfs check --readonly "$T/e.img" > "$T/check.log" 2>&1 || { cat "$T/check.log"; fail "btrfs check after the small transactions"; }
echo "after the refusals: 2 small transactions committed, btrfs check clean"
