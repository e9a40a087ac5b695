#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The suite on a loaded machine (issue 13): runs ctest -j JOBS in BUILD while
# BURNERS other processes keep the CPUs busy, as on a shared CI machine.
# Usage: scripts/stress-test.sh [BUILD] (default build-asan, made by
# scripts/build.sh asan); STRESS_JOBS (default 2), STRESS_BURNERS (default
# 2) and STRESS_CTEST_ARGS (extra ctest arguments, e.g. "-R image/06")
# change the run. A burner is `sha256sum /dev/zero` (one CPU each, no I/O).
# Prints the load average before, during (each minute) and after, and exits
# with ctest's status. Tests wait on events (a fail point, a FIFO, a file), not
# on time, so a loaded machine slows the suite but must not fail it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
jobs=${STRESS_JOBS:-2}
burners=${STRESS_BURNERS:-2}
[ -f "$build/CTestTestfile.cmake" ] || { echo "stress-test: no test build in $build (scripts/build.sh asan)" >&2; exit 2; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:malloc_context_size=10}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

pids=()
cleanup() { ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
echo "stress-test: load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $burners burners; ctest -j$jobs"
for ((i = 0; i < burners; i++)); do
  sha256sum /dev/zero > /dev/null 2>&1 &
  pids+=($!)
done
(while sleep 60; do echo "stress-test: load $(cut -d' ' -f1-3 /proc/loadavg)"; done) &
pids+=($!)
t0=$SECONDS
rc=0
# shellcheck disable=SC2086 # STRESS_CTEST_ARGS is a list of arguments
(cd "$build" && ctest --output-on-failure -j"$jobs" ${STRESS_CTEST_ARGS:-}) || rc=$?
echo "stress-test: ctest exit $rc in $((SECONDS - t0)) s beside $burners burners; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
