# SPDX-License-Identifier: GPL-2.0-only
# Helpers for the bad-input image tests (tests/image/02x-*): run fsctl on a
# damaged image and check the outcome the issue asks for — one "ERROR: " line
# on stderr naming what is wrong, a specific exit code, no sanitizer report,
# and the image left byte-identical. Source after common/lib.sh.
# Provides: EDIT (python helper), snap FILE..., unchanged FILE...,
# expect RC CMD... (sets $ERRLINE, $STDERR), says TEXT... (checks $ERRLINE).
EDIT="python3 $(dirname "${BASH_SOURCE[0]}")/btrfs_edit.py"

# Records the img_sum (lib.sh) of each file; `unchanged` checks them later.
snap() { for f in "$@"; do img_sum "$f" > "$f.sha"; done; }
unchanged() {
  for f in "$@"; do
    [ "$(img_sum "$f")" = "$(cat "$f.sha")" ] || fail "$f was modified by fsctl"
  done
}

# expect RC CMD...: runs CMD, requires exit code RC and no crash. For RC != 0
# stderr must hold exactly one line starting "ERROR: " (kept in $ERRLINE).
expect() {
  local want=$1; shift
  local rc=0
  "$@" >"$T/stdout" 2>"$T/stderr" || rc=$?
  STDERR=$(cat "$T/stderr")
  if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|Segmentation fault|terminate called' "$T/stderr"; then
    cat "$T/stderr" >&2; fail "crash or sanitizer report from: $*"
  fi
  [ "$rc" -eq "$want" ] || { cat "$T/stderr" >&2; fail "exit code $rc, expect $want from: $*"; }
  ERRLINE=$(grep '^ERROR: ' "$T/stderr" || true)
  if [ "$want" -ne 0 ]; then
    [ "$(grep -c '^ERROR: ' "$T/stderr")" -eq 1 ] || { cat "$T/stderr" >&2; fail "expect exactly one ERROR line from: $*"; }
  else
    [ -z "$ERRLINE" ] || fail "unexpected error from $*: $ERRLINE"
  fi
  echo "ok ($rc): $* -> ${ERRLINE:-$(head -1 "$T/stderr")}"
}
# says TEXT...: each fixed string appears in the ERROR line of the last `expect`.
says() { for s in "$@"; do [[ "$ERRLINE" == *"$s"* ]] || fail "error line lacks '$s': $ERRLINE"; done; }
# warns TEXT...: each fixed string appears in a WARNING line of the last `expect`.
warns() { for s in "$@"; do grep '^WARNING: ' "$T/stderr" | grep_q -F -- "$s" || { cat "$T/stderr" >&2; fail "no warning with '$s'"; }; done; }
# subvol_leaf_extent IMG: a leaf of subvolume 256 (not its root) inside the
# METADATA block group, and where its METADATA_ITEM and that group's
# BLOCK_GROUP_ITEM lie. Prints "LEAF EXTENT_LEAF SLOT ITEM_OFFSET BG_LEAF
# USED_OFFSET USED": offsets are byte offsets inside their extent-tree leaf
# (101 = the leaf header), USED the group's used bytes (attack tests 181, 184).
subvol_leaf_extent() {
  python3 - "$1" <<'PY'
import json, subprocess, os, sys
img = sys.argv[1]
def dump(t):
    return json.loads(subprocess.run([os.environ["FSCTL"], "inspect", "dump-tree", "--format", "json", "-t", t, img],
                                     check=True, capture_output=True, text=True).stdout)["trees"][0]["blocks"]
ext = dump("extent")
bg = [(b["bytenr"], it) for b in ext for it in b.get("items", []) if it["key"]["type_name"] == "BLOCK_GROUP_ITEM"
      and it["data"]["flags_name"].startswith("METADATA")][0]
start, length = bg[1]["key"]["objectid"], bg[1]["key"]["offset"]
leaves = [b["bytenr"] for b in dump("256") if b["level"] == 0 and start <= b["bytenr"] < start + length]
leaf = leaves[len(leaves) // 2]
for b in ext:
    for it in b.get("items", []):
        if it["key"]["objectid"] == leaf and it["key"]["type_name"] == "METADATA_ITEM":
            print(leaf, b["bytenr"], it["slot"], 101 + it["itemoff"], bg[0], 101 + bg[1]["itemoff"], bg[1]["data"]["used"])
PY
}
