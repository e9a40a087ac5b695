#!/usr/bin/env bash
# 074-commit-block-reuse: a tree block of the transaction whose
# METADATA_ITEM an earlier commit round inserted, freed in a later round's
# drop phase (an extent leaf emptied into its neighbours) and allocated
# again at once by the next copy (the allocator reuses freed blocks first),
# must take that item over instead of inserting it a second time. It failed
# with "item (B 169 0) already exists in tree 2" (convert --bg-tree of the
# 8 TiB 4K-node bench image, half converted; found by bisecting to the
# allocator's reuse, 841c9ac). This reproducer (tests/tools/tree_torture,
# scratch tree 200) failed at the third transaction of step 2 before the fix:
#   1. one transaction grows the scratch tree to about 14,000 leaves of 4K,
#      so its commit leaves a long run of full extent leaves made together;
#   2. transactions of 1,000 random changes then copy scattered scratch
#      leaves: round 0 of each commit copies many but not all of those
#      extent leaves, and round 1 drops the old copies' items, emptying one
#      of round 0's new leaves, whose block the next copy takes again.
# Afterwards btrfs check passes and the tree equals tree_torture's model
# (it compares after every commit).
source "$(dirname "$0")/../common/lib.sh"
TT=${FSCTL_TREE_TORTURE:-$(dirname "$FSCTL")/tests/tree_torture}
[ -x "$TT" ] || skip "tree_torture not built ($TT)"
IMG="$T/tt.img"
mkimg "$IMG" 4G -n 4096 -s 4096 -m single -d single
"$TT" "$IMG" --seed 1 --transactions 1 --ops 60000 --mix grow --sizes large -q > "$T/grow.log" 2>&1 ||
  { tail -5 "$T/grow.log"; fail "step 1 (grow to ~14,000 leaves)"; }
rc=0
"$TT" "$IMG" --seed 1 --transactions 10 --ops 1000 --mix mixed > "$T/mixed.log" 2>&1 || rc=$?
grep "^txn" "$T/mixed.log" | tail -3
[ $rc -eq 0 ] || { tail -5 "$T/mixed.log"; fail "step 2 (10 transactions of 1,000 changes): exit $rc"; }
btrfs check --readonly "$IMG" > "$T/check.out" 2>&1 || { tail "$T/check.out"; fail "btrfs check after step 2"; }
echo PASS
