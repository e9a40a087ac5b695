#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# check_retry.sh BTRFS ARGS...: runs the btrfs-progs binary BTRFS with ARGS.
# When ARGS is a `check`, it is run again (up to 5 runs) while its only
# failure is the mount status race below; every other outcome, its exit code
# and its output are passed on unchanged (stdout to stdout, stderr to stderr).
#
# The race: before reading anything, btrfs check asks whether the filesystem
# is mounted, opening the device of every btrfs in /proc/mounts. The image
# tests run in parallel (ctest -j3); when another test unmounts and detaches
# its loop device at that instant, check stops with "ERROR: could not check
# mount status: No such device" (exit 1) about a device that is not ours.
# CI saw it once (stop 23: 060-convert-fresh on a two-device image).
# Retries are logged to $CHECK_RETRY_LOG when it is set.
set -uo pipefail
bin=$1
shift
if [ "${1:-}" != check ]; then exec "$bin" "$@"; fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/check_retry.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
for try in 1 2 3 4 5; do
  rc=0
  "$bin" "$@" > "$dir/out" 2> "$dir/err" || rc=$?
  [ $rc -ne 0 ] && [ $try -lt 5 ] && grep -q "could not check mount status" "$dir/err" || break
  [ -z "${CHECK_RETRY_LOG:-}" ] || echo "check_retry: $bin $* (try $try): $(grep -m1 "could not check mount status" "$dir/err")" >> "$CHECK_RETRY_LOG"
done
cat "$dir/out"
cat "$dir/err" >&2
exit $rc
