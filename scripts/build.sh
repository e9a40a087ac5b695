#!/usr/bin/env bash
# Builds fsctl. Usage: scripts/build.sh [release|asan] (default release).
# release -> build/, asan -> build-asan/ (AddressSanitizer + UBSan). Warnings
# are errors here (-DFSCTL_WERROR=ON): scripts/test.sh, and so CI, builds
# through this script.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DFSCTL_WERROR=ON) ;;
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DFSCTL_SANITIZE=ON -DFSCTL_WERROR=ON) ;;
  *) echo "usage: $0 [release|asan]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
