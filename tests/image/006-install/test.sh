#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 006-install: `cmake --install BUILD --prefix $T/prefix` (cmake/install.cmake)
# installs exactly fsctl in sbin (its --version the built binary's), the man
# pages of man/ in share/man/man8 (at least 6), the bash completion (valid
# bash; `complete -p fsctl` after sourcing it) and the zsh completion, and
# nothing else: no test tool (unit_tests, tree_torture, chunk_torture,
# put_item, fuzz targets), no static library, no header. Needs no image and no
# root.
source "$(dirname "$0")/../common/lib.sh"
BUILD=${FSCTL_BUILD_DIR:-$(dirname "$FSCTL")}
[ -f "$BUILD/cmake_install.cmake" ] || fail "no cmake_install.cmake in $BUILD (FSCTL_BUILD_DIR)"
P=$T/prefix
cmake --install "$BUILD" --prefix "$P" > "$T/install.log" 2>&1 || { cat "$T/install.log" >&2; fail "cmake --install failed"; }

# GNUInstallDirs: sbin and share/man here (a /usr prefix would keep them).
sbin=$P/sbin
man8=$P/share/man/man8
bash_comp=$P/share/bash-completion/completions/fsctl
zsh_comp=$P/share/zsh/vendor-completions/_fsctl

[ -x "$sbin/fsctl" ] || fail "no executable $sbin/fsctl"
want=$("$FSCTL" --version)
got=$("$sbin/fsctl" --version) || fail "installed fsctl --version failed"
[ "$got" = "$want" ] || fail "installed fsctl --version says '$got', the built one '$want'"
grep -qE '^fsctl [0-9]' <<<"$got" || fail "--version says '$got', expected 'fsctl VERSION'"

npages=0
for m in "$FSCTL_SRC"/man/*.8; do
  cmp -s "$m" "$man8/$(basename "$m")" || fail "man page $(basename "$m") not installed in $man8 (or differs)"
  npages=$((npages + 1))
done
((npages >= 6)) || fail "only $npages man pages installed, expected at least 6"

[ -f "$bash_comp" ] || fail "no bash completion $bash_comp"
[ -f "$zsh_comp" ] || fail "no zsh completion $zsh_comp"
[ "$(head -1 "$zsh_comp")" = '#compdef fsctl' ] || fail "$zsh_comp does not start with '#compdef fsctl'"
bash -n "$bash_comp" || fail "bash -n $bash_comp: syntax error"
bash -c 'source "$1" && complete -p fsctl' _ "$bash_comp" > "$T/complete.txt" 2>&1 ||
  { cat "$T/complete.txt" >&2; fail "complete -p fsctl fails after sourcing $bash_comp"; }
grep -qF -- '-F _fsctl fsctl' "$T/complete.txt" || fail "complete -p fsctl says '$(cat "$T/complete.txt")'"
# The completion offers the commands of `fsctl --help`.
cmds=$("$FSCTL" --help | awk '/^Subcommands:/ {on=1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on=0}' | sort | tr '\n' ' ')
offered=$(bash -c 'source "$1"; COMP_WORDS=(fsctl ""); COMP_CWORD=1; _fsctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_comp" | sort | tr '\n' ' ')
[ -n "$cmds" ] && [ "$cmds" = "$offered" ] || fail "bash completion offers '$offered', fsctl --help lists '$cmds'"
if command -v zsh > /dev/null; then zsh -n "$zsh_comp" || fail "zsh -n $zsh_comp: syntax error"; fi

# Nothing else: the list of installed files is exactly these.
expected=$(
  {
    echo "sbin/fsctl"
    for m in "$FSCTL_SRC"/man/*.8; do echo "share/man/man8/$(basename "$m")"; done
    echo "share/bash-completion/completions/fsctl"
    echo "share/zsh/vendor-completions/_fsctl"
  } | sort
)
actual=$(cd "$P" && find . -type f -o -type l | sed 's|^\./||' | sort)
if [ "$actual" != "$expected" ]; then
  diff <(echo "$expected") <(echo "$actual") >&2 || true
  fail "installed files differ from the expected list (< expected, > installed)"
fi
echo "ok: installed $(wc -l <<<"$actual") files: sbin/fsctl ($got), $npages man pages, bash and zsh completions; nothing else"
