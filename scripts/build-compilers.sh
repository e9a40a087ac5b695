#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Builds fsctl the ways a packager does, with warnings as errors, so that a
# warning only one compiler or one optimization level gives fails CI
# (issue 13: GCC 12 at -O3 once reported -Werror=restrict that the -O2
# builds never saw). Usage: scripts/build-compilers.sh [CONFIG...]
#
# CONFIG is COMPILER:BUILD_TYPE, default the two CI builds:
#   g++:Release  clang++:Release
# GCC's -O2 is the test build itself (scripts/build.sh asan: RelWithDebInfo
# with -Werror and the sanitizers), and scripts/fuzz.sh compiles the layers
# the fuzz targets link with clang at -O1, so each compiler meets -O3 and a
# lower level. clang++:RelWithDebInfo (-O2) was a third CI build until the
# CI wall time went over its 30 minutes (75 s); run it by hand with
# `scripts/build-compilers.sh clang++:RelWithDebInfo`.
#
# Each build goes to build-cc/<compiler>-<type>/ (target fsctl only; no
# tests), as a unity build (CMAKE_UNITY_BUILD: a few large sources per
# target, about half the CPU of file-by-file), then runs `fsctl --version`.
# A compiler that is not installed is named and skipped (scripts/setup.sh
# installs clang).
set -euo pipefail
cd "$(dirname "$0")/.."
configs=("$@")
((${#configs[@]})) || configs=(g++:Release clang++:Release)
# shellcheck source=scripts/generator.sh
source scripts/generator.sh
failed=0
for c in "${configs[@]}"; do
  cxx=${c%%:*} type=${c#*:}
  if ! command -v "$cxx" >/dev/null; then
    echo "build-compilers: $cxx not installed: $type build skipped" >&2
    continue
  fi
  dir=build-cc/$cxx-$type
  mkdir -p build-cc
  cmake_generator "$dir"
  t0=$SECONDS
  if CXX=$cxx cmake -S . -B "$dir" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE="$type" -DFSCTL_WERROR=ON \
       -DBUILD_TESTING=OFF -DCMAKE_UNITY_BUILD=ON > "$dir.log" 2>&1 &&
     cmake --build "$dir" -j"$(nproc)" --target fsctl >> "$dir.log" 2>&1 &&
     "$dir/fsctl" --version >> "$dir.log"; then
    echo "build-compilers: $cxx $type: $("$dir/fsctl" --version) ($((SECONDS - t0)) s)"
  else
    tail -40 "$dir.log" >&2
    echo "build-compilers: $cxx $type: FAILED (whole log: $dir.log)" >&2
    failed=1
  fi
done
exit $failed
