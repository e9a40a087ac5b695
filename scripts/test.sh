#!/usr/bin/env bash
# The project's test command (README.md, .ci/run): installs what is missing,
# builds with ASan+UBSan, builds fsctl with GCC and clang as packagers do
# (scripts/build-compilers.sh), runs unit and image tests (ctest), then each
# fuzz target for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase prints its wall time, so that a slow CI run says where it went.
phase() {
  local name=$1 t0=$SECONDS
  shift
  "$@"
  echo "test.sh: $name took $((SECONDS - t0)) s (${SECONDS} s so far)"
}
phase setup scripts/setup.sh
phase "ASan build" scripts/build.sh asan
phase "compiler builds" scripts/build-compilers.sh
# malloc_context_size=10 (default 30): allocation stacks in ASan reports are
# 10 frames deep; recording 30 cost ~13% of the CPU of the dump-heavy tests.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:malloc_context_size=10
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# -j3 on CI's 2 cores: the image tests wait on mkfs, mounts and loop devices
# part of the time (stop 19: the whole suite in 13.4 min wall at -j3).
phase ctest bash -c 'cd build-asan && ctest --output-on-failure -j3'
# 20 s per fuzz target in CI (FUZZ_SECONDS; 30 until the CI wall time went
# over its 30 minutes); longer runs by hand: scripts/fuzz.sh 600.
phase fuzz scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
