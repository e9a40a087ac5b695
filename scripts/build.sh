#!/usr/bin/env bash
# Builds fsctl. Usage: scripts/build.sh [release|asan] (default release).
# release -> build/, asan -> build-asan/ (AddressSanitizer + UBSan). Warnings
# are errors here (-DFSCTL_WERROR=ON): scripts/test.sh, and so CI, builds
# through this script.
# Build time (CI): Ninja where installed (scripts/setup.sh installs it): it
# compiles a layer's sources while the layers below still build, where make
# waits for each library; the asan build keeps line tables only (-g1: the
# sanitizers' stack traces still name file and line) — full debug info
# made the template-heavy cmd/ objects (CLI11, nlohmann/json) take ~45% longer;
# cmd/ and the test programs build at -O1 (FSCTL_GLUE_OPTIONS, CMakeLists.txt),
# cmd/ as two unity sources (FSCTL_UNITY_CMD: ~200 s of CPU instead of ~490),
# and lib/ and the tests as unity sources of 8 files (CMAKE_UNITY_BUILD: lib/
# took 253 s of CPU instead of 467; the CI wall time was over its 30 minutes).
# A release build (the default here, and scripts/demo.sh) compiles each file
# alone, so an include a file lacks still fails a build.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
case "$kind" in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DFSCTL_WERROR=ON) ;;
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DFSCTL_SANITIZE=ON -DFSCTL_WERROR=ON
                               "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DFSCTL_GLUE_OPTIONS=-O1
                               -DFSCTL_UNITY_CMD=ON -DCMAKE_UNITY_BUILD=ON) ;;
  *) echo "usage: $0 [release|asan]" >&2; exit 2 ;;
esac
# shellcheck source=scripts/generator.sh
source scripts/generator.sh
cmake_generator "$dir"
# ccache where installed (developer machines; CI has none and builds once):
# with base_dir set in its config, worktrees of one commit share objects.
if command -v ccache >/dev/null; then flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$dir" "${GENERATOR[@]}" "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
