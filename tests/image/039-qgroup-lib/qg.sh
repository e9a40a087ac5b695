# SPDX-License-Identifier: GPL-2.0-only
# Bash helpers for the qgroup image tests (030-034). Source after common/lib.sh.
# Provides: QG (qg.py), qg_mount IMG MNT [opts], qg_umount MNT (and an EXIT
# trap that unmounts whatever is still mounted), kernel_truth MNT OUT (the
# kernel's numbers after `quota rescan -w`, normalized by qg.py),
# run_rc OUTFILE CMD... (runs CMD, stdout to OUTFILE, sets $RC), check NAME CMD...
QG="$(dirname "${BASH_SOURCE[0]}")/qg.py"
QG_MOUNTS=()
qg_cleanup() {
  local m
  for m in "${QG_MOUNTS[@]}"; do mountpoint -q "$m" 2>/dev/null && umount "$m" 2>/dev/null || true; done
}
trap qg_cleanup EXIT
qg_mount() {
  local img=$1 mnt=$2 opts=${3:-}
  mkdir -p "$mnt"
  mount -o "loop${opts:+,$opts}" "$img" "$mnt"
  QG_MOUNTS+=("$mnt")
}
qg_umount() { umount "$1"; }
# Kernel truth: wait for any rescan, rescan again, list every qgroup. A rescan
# that overlaps the cleaner's end of a subvolume drop (its qgroup removal) can
# end with the INCONSISTENT flag and partial numbers (seen on 6.18), so the
# rescan is repeated until `qgroup show` no longer warns; then the numbers are
# the kernel's truth.
kernel_truth() {
  local mnt=$1 out=$2 try
  btrfs subvolume sync "$mnt" >/dev/null
  for try in 1 2 3 4 5; do
    btrfs filesystem sync "$mnt" >/dev/null
    btrfs quota rescan -W "$mnt" >/dev/null 2>&1 || true   # waits for a running rescan
    btrfs quota rescan -w "$mnt" >/dev/null
    # text, not --format json: progs 6.2's JSON aborts on qgroups with limits
    btrfs qgroup show --raw -pcre "$mnt" > "$out.txt" 2> "$out.err"
    grep -qi inconsistent "$out.err" || break
    echo "  (kernel truth: rescan $try ended inconsistent, rescanning again)"
    sleep 1
  done
  ! grep -qi inconsistent "$out.err" || fail "the kernel's qgroup numbers stay inconsistent after 5 rescans"
  python3 "$QG" truth-from-progs-text "$out.txt" > "$out"
}
# run_rc OUT CMD...: stdout to OUT, stderr to OUT.err, exit code in $RC.
run_rc() {
  local out=$1; shift
  set +e; "$@" > "$out" 2> "$out.err"; RC=$?; set -e
}
# Accumulates failures so one run reports all of them.
QG_FAILS=0
check() {
  local what=$1; shift
  if "$@"; then echo "  ok: $what"; else echo "  FAILED: $what" >&2; QG_FAILS=$((QG_FAILS + 1)); fi
}
qg_finish() {
  [ "$QG_FAILS" -eq 0 ] || fail "$QG_FAILS check(s) failed"
  echo "PASS"
}
