#!/usr/bin/env bash
# 087-attack-corrupt-later-batch: a corrupt extent leaf that only a later
# batch of `convert --no-bg-tree` reaches must be refused before the first
# commit (exit 3, image byte-identical), not after 96 of 106 groups moved,
# leaving CHANGING_BG_TREE set, a rerun failing on the same leaf and the
# kernel refusing to mount (attack finding, session 4: the run's rehearsal
# of every batch met the read error and ignored it). The manybg fixture
# (106 block groups, 4K) from ../shared; without it the test skips.
source "$(dirname "$0")/../common/lib.sh"
IMG="$T/m.img"
unpack_fixture "$SHARED/fixtures/manybg-4k-single-1g.img.zst" "$IMG" || skip "fixture manybg-4k-single-1g not in $SHARED/fixtures"
"$FSCTL" -q convert --bg-tree "$IMG" > /dev/null || fail "convert --bg-tree of the fixture"
# An extent-tree leaf holding only data extents (keys 15482880..313524224
# in this fixture), which the last batch of 8 going back reaches.
python3 "$FSCTL_SRC/tests/image/common/btrfs_edit.py" flip "$IMG" 6561792 2000 > /dev/null
before=$(img_sum "$IMG")
rc=0
"$FSCTL" convert --no-bg-tree --batch 8 "$IMG" > "$T/out" 2> "$T/err" || rc=$?
[ $rc -eq 3 ] || { cat "$T/err"; fail "convert --no-bg-tree over a corrupt leaf of a later batch: exit $rc, expect 3"; }
grep_q "tree block 6561792.*csum mismatch" < "$T/err" || { cat "$T/err"; fail "no error naming block 6561792"; }
[ "$(img_sum "$IMG")" = "$before" ] || fail "the refused conversion changed the image"
echo "refused before writing: $(cat "$T/err")"
echo PASS
