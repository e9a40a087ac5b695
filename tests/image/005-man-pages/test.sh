#!/usr/bin/env bash
# 005-man-pages: the man pages under man/ render without a groff warning, every
# command of `fsctl --help` has a page man/fsctl-CMD.8 with a section (.SS) per
# subcommand of `fsctl CMD --help` naming each of its options, fsctl.8 lists
# every command and global option, its EXIT STATUS table has exactly the
# codes of cmd/output.h, and every .TH line carries the project's version
# (CMakeLists.txt). Needs no image and no root.
source "$(dirname "$0")/../common/lib.sh"
MAN=$FSCTL_SRC/man
command -v groff >/dev/null || skip "groff not installed (scripts/setup.sh installs groff-base)"
errors=0
bad() { echo "FAIL: $*" >&2; errors=$((errors + 1)); }

# 1. Render every page: groff -ww turns on all warnings, -z discards the output.
pages=("$MAN"/*.8)
[ -e "${pages[0]}" ] || fail "no man pages in $MAN"
for p in "${pages[@]}"; do
  out=$(groff -man -ww -z -Tutf8 "$p" 2>&1) || bad "$p: groff failed"
  [ -z "$out" ] || bad "$p: groff warnings:"$'\n'"$out"
  if command -v man >/dev/null; then
    out=$(MANWIDTH=80 man --warnings -l -E UTF-8 -Tutf8 "$p" 2>&1 >/dev/null) || bad "$p: man failed"
    [ -z "$out" ] || bad "$p: man warnings:"$'\n'"$out"
  fi
done

# Names listed under "Subcommands:" in CLI11's --help output.
subcommands() { "$FSCTL" "$@" --help | awk '/^Subcommands:/ {on=1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on=0}'; }
# Long and short options listed under "Options:" (without -h/--help).
options() {
  "$FSCTL" "$@" --help | awk '/^Options:/ {on=1; next} on && /^ +-/ {print $1} /^[A-Z][a-z]*:/ && !/^Options:/ {on=0}' |
    tr ',' '\n' | grep -E '^-' | grep -vxE -- '-h|--help' || true
}
# Text of section ".SS NAME ..." of a page, up to the next .SS or .SH.
# (The name may be written with roff's escaped hyphen "\-" or a plain one.)
section() { awk -v n="$2" '/^\.S[HS] / {w = $2; gsub(/\\/, "", w); on = ($1 == ".SS" && w == n)} on' "$1"; }

# 2. Every command has a page and a section per subcommand, naming its options.
cmds=$(subcommands)
[ -n "$cmds" ] || fail "could not read the commands from fsctl --help"
for c in $cmds; do
  page=$MAN/fsctl-$c.8
  [ -f "$page" ] || { bad "command '$c' has no man page $page"; continue; }
  grep -qF ".BR fsctl\\-$c (8)" "$MAN/fsctl.8" || bad "fsctl.8 does not refer to fsctl-$c(8)"
  subs=$(subcommands "$c")
  if [ -z "$subs" ]; then
    # A command without subcommands (convert): its page names every option,
    # and fsctl.8 lists the command.
    grep -qF ".B $c " "$MAN/fsctl.8" || bad "fsctl.8 COMMANDS does not list '$c'"
    for o in $(options "$c"); do
      grep -qF -- "${o//-/\\-}" "$page" || bad "$page does not describe option $o"
    done
    continue
  fi
  for s in $subs; do
    roff_s=${s//-/\\-}
    text=$(section "$page" "$s")
    [ -n "$text" ] || { bad "$page has no section '.SS $s'"; continue; }
    grep -qF ".B $c $roff_s" "$MAN/fsctl.8" || bad "fsctl.8 COMMANDS does not list '$c $s'"
    for o in $(options "$c" "$s"); do
      roff_o=${o//-/\\-}
      grep -qF -- "$roff_o" <<<"$text" || bad "$page section '$s' does not describe option $o"
    done
  done
done

# 3. Global options are in fsctl.8.
for o in $(options); do
  grep -qF -- "${o//-/\\-}" "$MAN/fsctl.8" || bad "fsctl.8 does not describe global option $o"
done

# 4. EXIT STATUS of fsctl.8 lists exactly the codes of cmd/output.h.
src_codes=$(grep -oE '^\s*EXIT_[A-Z_]+ = [0-9]+' "$FSCTL_SRC/cmd/output.h" | grep -oE '[0-9]+$' | sort -n | tr '\n' ' ')
man_codes=$(awk '/^\.SH EXIT STATUS/ {on=1; next} /^\.SH/ {on=0} on && prev == ".TP" && /^\.B [0-9]+$/ {print $2} {prev=$0}' \
  "$MAN/fsctl.8" | sort -n | tr '\n' ' ')
[ -n "$src_codes" ] || bad "no exit codes found in cmd/output.h"
[ "$src_codes" = "$man_codes" ] || bad "exit codes: cmd/output.h has '$src_codes', fsctl.8 EXIT STATUS has '$man_codes'"

# 5. Every page's .TH line names the project's version ("fsctl X.Y.Z" =
# project(fsctl VERSION X.Y.Z) of CMakeLists.txt; ctest passes it as
# FSCTL_PROJECT_VERSION, a manual run reads CMakeLists.txt).
proj_ver=${FSCTL_PROJECT_VERSION:-$(sed -nE 's/^project\(fsctl VERSION ([0-9.]+).*/\1/p' "$FSCTL_SRC/CMakeLists.txt")}
[ -n "$proj_ver" ] || bad "no project version in CMakeLists.txt"
for p in "${pages[@]}"; do
  th=$(grep -m1 '^\.TH ' "$p") || { bad "$p has no .TH line"; continue; }
  grep -qF "\"fsctl $proj_ver\"" <<<"$th" || bad "$p: .TH says '$th', expected version \"fsctl $proj_ver\""
done

# 6. The JSON header described in fsctl.8 is the one the code writes.
grep -q '"__header"' "$MAN/fsctl.8" || bad "fsctl.8 does not describe the JSON header"
ver=$(grep -oE 'JSON_VERSION = "[0-9]+"' "$FSCTL_SRC/cmd/output.h" | grep -oE '"[0-9]+"' | head -1)
grep -qF "\"version\": $ver" "$MAN/fsctl.8" || bad "fsctl.8 does not give JSON version $ver"

((errors == 0)) || fail "$errors problem(s) in the man pages"
echo "ok: ${#pages[@]} man pages (fsctl $proj_ver) render cleanly and cover: $(echo $cmds) and exit codes $src_codes"
