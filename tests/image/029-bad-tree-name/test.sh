#!/usr/bin/env bash
# 029-bad-tree-name: dump-tree -t with an unknown tree name, or with a tree
# id that does not exist in this filesystem; dump-tree -b with a bytenr no
# chunk maps. Proves: one "ERROR: " line naming the bad argument, exit 2 for
# the usage errors and 3 for the unmapped block, image unchanged.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
img="$T/a.img"
mkimg "$img" 256M
snap "$img"
expect 2 "$FSCTL" inspect dump-tree -t no-such-tree "$img"
says "unknown tree 'no-such-tree'"
expect 2 "$FSCTL" inspect dump-tree -t 12345 "$img"
says "$img" "tree 12345" "does not exist"
expect 2 "$FSCTL" inspect dump-tree --format json -t quota "$img"
says "$img" "quota" "does not exist"
expect 3 "$FSCTL" inspect dump-tree -b 1099511627776 "$img"
says "$img" "tree block 1099511627776" "not mapped by any chunk"
# CLI11 rejects a non-number: exit 2 with its own message (not "ERROR: ").
rc=0; "$FSCTL" inspect dump-tree -b notanumber "$img" >/dev/null 2>"$T/stderr" || rc=$?
[ $rc -eq 2 ] || fail "dump-tree -b notanumber: exit $rc, expect 2"
grep -q "notanumber" "$T/stderr" || fail "dump-tree -b notanumber: message does not name the argument"
expect 0 "$FSCTL" inspect dump-tree -t extent "$img"
unchanged "$img"
