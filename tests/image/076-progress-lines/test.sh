#!/usr/bin/env bash
# 076-progress-lines: progress when stderr is not a terminal (issue 13,
# fsctl(8) PROGRESS): plain lines with --progress (or a command's -p), none
# without, none with -q; JSON stdout stays one document; -v adds a line per
# committed step; the JSON reports carry the totals.
#  - convert --bg-tree --batch 1 --progress-interval 0: a line per update,
#    no carriage return or escape sequence, the percentage never decreasing,
#    the last line 100% and "done in"; the default interval (1 s) still
#    prints the first and the final line.
#  - a resumed conversion (stopped by SIGINT after commit 5) counts the
#    whole filesystem: its first line is already past 0 of all block groups.
#  - balance -m: lines in tree blocks (more lines than commits: progress per
#    tree block inside a batch) with bytes; JSON tree_blocks_done ==
#    tree_blocks_total, block_groups_done == block_groups_total.
#  - qgroup verify -p: tree blocks walked.
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/060-convert-fresh/cvlib.sh"
need_mount

# 10 block groups: 8 data groups of 1 GiB preallocated, metadata, system.
mk_many_bg "$T/base.img" "$T/mnt"
umount "$T/mnt"; CV_MNTS=()
bgjson "$T/bg.json" "$T/base.img"
nbg=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["block_groups"]))' "$T/bg.json")

# check_lines FILE LABEL: plain lines only, the percentage never decreasing,
# the last progress line 100% and "done in". Prints the number of lines.
check_lines() {
  python3 - "$1" "$2" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read().decode()
label = sys.argv[2]
assert "\r" not in data and "\x1b" not in data, "carriage return or escape in plain lines: %r" % data[:300]
lines = [l for l in data.split("\n") if re.match(re.escape(label) + r": \d+% ", l)]
assert lines, "no progress lines: %r" % data[:500]
pcts = [int(re.match(re.escape(label) + r": (\d+)% ", l).group(1)) for l in lines]
assert pcts == sorted(pcts), "the percentage went back: %s" % pcts
assert pcts[-1] == 100 and "done in" in lines[-1], "last line: %s" % lines[-1]
print(len(lines))
PY
}

# Every update, then the default interval.
cp --sparse=always "$T/base.img" "$T/a.img"
"$FSCTL" --progress --progress-interval 0 convert --bg-tree --batch 1 "$T/a.img" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "convert --progress"; }
n=$(check_lines "$T/err" convert) || { cat "$T/err"; fail "convert --progress lines"; }
[ "$n" -ge "$nbg" ] || fail "convert --progress-interval 0: $n lines for $nbg block groups"
grep_q "^convert: 100% $nbg/$nbg block groups" < "$T/err" || fail "not counted out of $nbg block groups"
grep -q "%" "$T/out" && fail "progress on stdout"
echo "convert --progress --progress-interval 0: $n lines, rising to 100%"
"$FSCTL" --progress convert --no-bg-tree --batch 1 "$T/a.img" > /dev/null 2> "$T/err" || fail "convert --no-bg-tree --progress"
n=$(check_lines "$T/err" convert) || { cat "$T/err"; fail "convert --progress (1 s) lines"; }
[ "$n" -ge 2 ] || fail "the default interval printed $n lines, expect the first and the last at least"
echo "convert --progress: $n lines (first, one a second, last)"

# The command's -p; nothing without it, nothing with -q.
cp --sparse=always "$T/base.img" "$T/b.img"
"$FSCTL" convert -p --bg-tree "$T/b.img" > /dev/null 2> "$T/err" || fail "convert -p"
check_lines "$T/err" convert > /dev/null || { cat "$T/err"; fail "convert -p lines"; }
cp --sparse=always "$T/base.img" "$T/b.img"
"$FSCTL" convert --bg-tree "$T/b.img" > /dev/null 2> "$T/err" || fail "convert"
# (Only progress is looked for: a NOTE, e.g. O_DIRECT refused on tmpfs, may be there.)
! grep -q "^convert:" "$T/err" || { cat "$T/err"; fail "stderr not a terminal, no --progress: progress printed"; }
cp --sparse=always "$T/base.img" "$T/b.img"
"$FSCTL" -q --progress convert --bg-tree "$T/b.img" > /dev/null 2> "$T/err" || fail "convert -q --progress"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "-q --progress printed on stderr"; }
echo "-p prints lines; no --progress or -q: stderr empty"

# JSON on stdout, progress and -v step lines on stderr.
cp --sparse=always "$T/base.img" "$T/j.img"
"$FSCTL" --format json -v --progress convert --bg-tree --batch 2 "$T/j.img" > "$T/j.json" 2> "$T/err" || fail "convert --format json --progress"
check_lines "$T/err" convert > /dev/null || { cat "$T/err"; fail "json: progress lines"; }
grep_q "^convert: step [0-9]* committed (transid [0-9]*): 2 block groups, [0-9]* tree blocks written" < "$T/err" ||
  { cat "$T/err"; fail "-v: no step lines"; }
python3 - "$T/j.json" "$nbg" <<'PY' || fail "json: bad document"
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert d["block_groups_total"] == n and d["block_groups_done"] == n, d
PY
echo "json: one document on stdout (block_groups_done $nbg), progress and step lines on stderr"

# Resumed: the whole filesystem's counts.
cp --sparse=always "$T/base.img" "$T/r.img"
rc=0
FSCTL_SIGNAL_AFTER_COMMITS=5 "$FSCTL" convert --bg-tree --batch 1 "$T/r.img" > /dev/null 2>&1 || rc=$?
[ "$rc" = 130 ] || fail "interrupted convert: exit $rc, expect 130"
"$FSCTL" --progress convert --bg-tree --batch 1 "$T/r.img" > /dev/null 2> "$T/err" || fail "resumed convert"
first=$(grep -m1 "^convert: " "$T/err")
[[ "$first" =~ ^convert:\ [0-9]+%\ ([0-9]+)/$nbg\ block\ groups ]] || fail "resumed: first line $first"
[ "${BASH_REMATCH[1]}" -ge 4 ] || fail "resumed: the first line counts ${BASH_REMATCH[1]} done, expect those moved before"
echo "resumed: $first"
# Nothing left to do: every block group done.
"$FSCTL" --format json convert --bg-tree "$T/r.img" > "$T/r.json" || fail "convert of a converted image"
python3 - "$T/r.json" "$nbg" <<'PY' || fail "already done: json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["already_done"] and d["block_groups_done"] == d["block_groups_total"] == int(sys.argv[2]), d
PY

# Balance: per tree block, bytes, JSON totals.
mksnapimg "$T/q.img" 300 30
"$FSCTL" --progress --progress-interval 0 --format json balance -m --batch 1 "$T/q.img" > "$T/bal.json" 2> "$T/err" ||
  { cat "$T/err"; fail "balance --progress"; }
check_lines "$T/err" balance > /dev/null || { cat "$T/err"; fail "balance progress lines"; }
grep_q "^balance: [0-9]*% [0-9,]*/[0-9,]* tree blocks, [0-9.]*[KMG]*i*B/[0-9.]*[KMG]*i*B" < "$T/err" || { cat "$T/err"; fail "balance lines without tree blocks and bytes"; }
python3 - "$T/bal.json" "$T/err" <<'PY' || fail "balance: json totals"
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["tree_blocks_total"] > 0 and d["tree_blocks_done"] == d["tree_blocks_total"], d
assert d["block_groups_done"] == d["block_groups_total"] == d["block_groups_selected"], d
lines = [l for l in open(sys.argv[2]) if re.match(r"balance: \d+% ", l)]
# Progress inside batches: more updates than commits.
assert len(lines) > d["commits"] + 1, (len(lines), d["commits"])
print("balance: %d lines over %d commits, %d tree blocks" % (len(lines), d["commits"], d["tree_blocks_total"]))
PY

# qgroup verify: tree blocks walked (no total).
"$FSCTL" qgroup verify -p "$T/q.img" > /dev/null 2> "$T/err" || fail "qgroup verify -p"
grep_q "^qgroup verify: [0-9,]* tree blocks, " < "$T/err" || { cat "$T/err"; fail "qgroup verify: no progress line"; }
echo "qgroup verify -p: $(tail -1 "$T/err")"
echo PASS
