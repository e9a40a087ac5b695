#!/usr/bin/env bash
# 075-progress-tty: the progress display on a terminal (issue 13, fsctl(8)
# PROGRESS). `fsctl convert --bg-tree --batch 1` of an image with 24 block
# groups runs on the terminal of a detached tmux session; at each progress
# update the process stops (FSCTL_PROGRESS_HOLD, cmd/env_hooks.h: it writes
# to the FIFO update and waits for a byte on the FIFO go), the test captures
# the pane (tmux capture-pane -p) and lets it go on; the command's wrapper
# announces its end on the same FIFO and waits for a last go, so the final
# screen is captured too. No sleep anywhere: every wait is on a FIFO. (Under
# the hold every update is drawn; the ten-a-second throttle is unit-tested,
# tests/unit/cmd/progress_test.cpp.)
# Checks: the percentage of the progress line never decreases and takes
# several values, an ETA and a rate appear, the screen never holds more than
# one progress line (redrawn in place with a carriage return), the final line
# says 100% and "done in", the summary went to stdout and the exit code is 0.
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/060-convert-fresh/cvlib.sh"
need_mount
command -v tmux > /dev/null || skip "tmux is not installed (Debian package tmux, scripts/setup.sh)"

# 24 block groups: 22 data groups of 1 GiB preallocated, metadata, system.
mkimg "$T/base.img" 24G -n 4096 -m single
mount_fs "$T/mnt" "$T/base.img"
for i in $(seq 1 21); do fallocate -l 1G "$T/mnt/f$i"; done
umount "$T/mnt"; CV_MNTS=()
bgjson "$T/bg.json" "$T/base.img"
nbg=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["block_groups"]))' "$T/bg.json")
[ "$nbg" -ge 20 ] || fail "the image has $nbg block groups, expect 20 or more"

H=$T/hold
mkdir -p "$H"
mkfifo "$H/update" "$H/go"
SOCK=fsctl-075-$$
tmux_() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tmux_ kill-server 2> /dev/null || true; cv_cleanup' EXIT
# The command on the pane's terminal; stdout to a file, stderr (the
# progress) on the terminal. Then the end, announced like an update.
cat > "$T/run.sh" <<RUN
FSCTL_PROGRESS_HOLD='$H' '$FSCTL' convert --bg-tree --batch 1 '$T/base.img' > '$T/out'
echo \$? > '$T/rc'
echo end > '$H/update'
read -r _ < '$H/go'
RUN
tmux_ new-session -d -s progress -x 200 -y 50 "bash '$T/run.sh'"

n=0
while :; do
  read -r what < "$H/update"
  tmux_ capture-pane -p -t progress > "$T/frame.$n"
  echo go > "$H/go"
  [ "$what" = end ] && break
  n=$((n + 1))
  [ "$n" -lt 1000 ] || fail "more than 1000 progress updates"
done
final=$T/frame.$n

[ "$(cat "$T/rc")" = 0 ] || fail "convert exited $(cat "$T/rc"): $(cat "$final")"
grep_q "^convert to block group tree: moved $nbg block group items" < "$T/out" || fail "no summary on stdout: $(cat "$T/out")"
! grep -q "%" "$T/out" || fail "progress on stdout: $(cat "$T/out")"

# The percentage of each screen, in order; never more than one progress line.
last=-1 values=0 eta=0 rate=0
for i in $(seq 0 "$n"); do
  f=$T/frame.$i
  lines=$(grep -c "^convert: [0-9]*% " "$f" || true)
  [ "$lines" -le 1 ] || { cat "$f"; fail "screen $i holds $lines progress lines: not redrawn in place"; }
  [ "$lines" = 1 ] || continue
  p=$(grep -o "^convert: [0-9]*%" "$f" | grep -o "[0-9]*")
  [ "$p" -ge "$last" ] || { cat "$f"; fail "the percentage went back from $last% to $p% on screen $i"; }
  [ "$p" = "$last" ] || values=$((values + 1))
  last=$p
  grep_q "^convert: .*/$nbg block groups" < "$f" || { cat "$f"; fail "screen $i does not count out of $nbg block groups"; }
  if grep -q "^convert: .*, ETA [0-9][0-9hms]*" "$f"; then eta=$((eta + 1)); fi
  if grep -q "^convert: .*, [0-9.,]*/s" "$f"; then rate=$((rate + 1)); fi
done
[ "$values" -ge 4 ] || fail "only $values different percentages over $n updates"
[ "$eta" -ge 1 ] || fail "no ETA on any screen"
[ "$rate" -ge 1 ] || fail "no rate on any screen"
grep_q "^convert: 100% $nbg/$nbg block groups, .*done in [0-9]" < "$final" || { cat "$final"; fail "the final line does not say 100% and done in"; }
echo "convert on a terminal: $n updates, $values percentages rising to 100%, ETA on $eta screens, one line redrawn in place"
echo "final: $(grep "^convert: " "$final")"
