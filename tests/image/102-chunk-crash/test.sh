#!/usr/bin/env bash
# 102-chunk-crash: crash consistency (DESIGN.md invariant 3) of transactions
# that allocate chunks and of one that removes block groups. The fail point
# FSCTL_FAIL_AFTER_WRITES=N ends the process right after its N-th write
# request; for every N of the transaction the image must be the state before
# it or after it:
#  - btrfs check --readonly passes (fsctl check too);
#  - the superblock generation is the old or the new one, and the chunks
#    progs lists (dump-tree -t chunk) and the block groups fsctl lists are
#    exactly that state's (compared with a run that was not stopped);
#  - no crash point shows an older state than an earlier one;
#  - running the same command again from there completes and check passes.
# Transactions: (a) 4K single, tree 200 filled with the metadata group
# excluded, so a new metadata chunk is made automatically and the new blocks
# go into it; (b) 16K dup with metadata and system groups excluded: a
# metadata and a system chunk, the chunk tree root moving into the new system
# chunk and sys_chunk_array growing; (c) an explicit raid1 metadata chunk on
# two devices (stripes and superblocks on both); (d) removal of an empty DUP
# metadata chunk and an empty SYSTEM chunk in one transaction.
source "$(dirname "$0")/../common/lib.sh"
source "$FSCTL_SRC/tests/image/common/chunklib.sh"

state_of() {  # OUT IMG...: generation, chunks (progs) and block groups (fsctl)
  local out=$1; shift
  { echo "generation $(super_field "$1" generation)"
    $CC chunks "$1"
    "$FSCTL" inspect block-groups "$@" | awk 'NR > 2 {print $1, $2, $4, $5}'
  } > "$out"
}

# crash_case NAME NDEV SIZE "MKFS ARGS" "SETUP CMD ARGS" CMD ARGS...
crash_case() {
  local name=$1 ndev=$2 size=$3 mkfs_args=$4 setup=$5; shift 5
  local base=() cur=() i
  for i in $(seq 1 "$ndev"); do base+=("$T/$name.base.$i"); cur+=("$T/$name.c.$i"); rm -f "$T/$name.base.$i"; truncate -s "$size" "$T/$name.base.$i"; done
  # shellcheck disable=SC2086
  mkfs.btrfs -q -f $mkfs_args "${base[@]}" > /dev/null
  # SETUP: chunk_torture commands separated by ';', run on the base first.
  : > "$T/$name.setup"
  local cmd
  while IFS= read -r -d ';' cmd; do
    [ -n "${cmd// /}" ] || continue
    # shellcheck disable=SC2086
    "$CT" "${base[@]}" $cmd >> "$T/$name.setup" 2>&1 || { cat "$T/$name.setup"; fail "$name: setup $cmd"; }
  done <<< "$setup;"
  # remove-new: remove the block groups the setup made.
  local args=("$@")
  if [ "${args[0]}" = remove-new ]; then args=(remove $(new_starts "$T/$name.setup")); fi
  state_of "$T/$name.old" "${base[@]}"
  # Reference: the same command, never stopped.
  for i in $(seq 0 $((ndev - 1))); do cp --sparse=always "${base[$i]}" "${cur[$i]}"; done
  FSCTL_FAIL_AFTER_WRITES=1000000000 "$CT" "${cur[@]}" "${args[@]}" > "$T/$name.ref" 2>&1 || { cat "$T/$name.ref"; fail "$name: reference run"; }
  state_of "$T/$name.new" "${cur[@]}"
  cmp -s "$T/$name.old" "$T/$name.new" && fail "$name: the command changed nothing"
  local W
  W=$(sed -n 's/^writes //p' "$T/$name.ref")
  [ "${W:-0}" -ge 2 ] || fail "$name: reference run counted ${W:-no} write requests"
  local n last=old olds=0 news=0 rc st
  for n in $(seq 1 "$W"); do
    for i in $(seq 0 $((ndev - 1))); do cp --sparse=always "${base[$i]}" "${cur[$i]}"; done
    rc=0
    FSCTL_FAIL_AFTER_WRITES=$n "$CT" "${cur[@]}" "${args[@]}" > "$T/$name.crash" 2>&1 || rc=$?
    [ $rc -eq 86 ] || { cat "$T/$name.crash"; fail "$name: crash at write $n: exit $rc, expect the fail point's 86"; }
    check_clean "$name: crash at write $n" "${cur[@]}"
    "$FSCTL" check "${cur[@]}" > "$T/fsctl-check.log" 2>&1 || { cat "$T/fsctl-check.log"; fail "$name: crash at write $n: fsctl check"; }
    state_of "$T/$name.st" "${cur[@]}"
    if cmp -s "$T/$name.st" "$T/$name.old"; then
      st=old; olds=$((olds + 1))
    elif cmp -s "$T/$name.st" "$T/$name.new"; then
      st=new; news=$((news + 1))
    else
      diff "$T/$name.old" "$T/$name.st" || true
      fail "$name: crash at write $n: neither the old nor the new state"
    fi
    [ "$last" = new ] && [ "$st" = old ] && fail "$name: crash at write $n: old state after an earlier crash point showed the new one"
    last=$st
    # The same command again from there.
    "$CT" "${cur[@]}" "${args[@]}" > "$T/$name.rerun" 2>&1 || {
      rc=$?
      # Removing what the crash already removed is refused; anything else is a failure.
      if [ "$st" = new ] && [ "${args[0]}" = remove ] && [ $rc -eq 3 ]; then :; else cat "$T/$name.rerun"; fail "$name: rerun after a crash at write $n (state $st)"; fi
    }
    check_clean "$name: rerun after a crash at write $n" "${cur[@]}"
  done
  [ "$last" = new ] || fail "$name: the last crash point (after the last write) is not the new state"
  echo "$name: $W write requests, each a crash point: $olds old, $news new state; btrfs check and fsctl check clean; every rerun completes"
}

crash_case auto-single4k 1 1G "-n 4096 -m single" "" fill --exclude metadata --ops 300 --max-transactions 1
crash_case auto-dup16k-sys 1 2G "-n 16384 -m dup" "" fill --exclude all --ops 300 --max-transactions 1
grep -q "^new [0-9]* [0-9]* SYSTEM" "$T/auto-dup16k-sys.ref" || fail "auto-dup16k-sys: no SYSTEM chunk was made"
crash_case alloc-raid1 2 1G "-n 16384 -m raid1 -d raid1" "" alloc metadata,raid1
crash_case remove 1 2G "-n 4096 -m single" "alloc metadata,dup --keep-empty; alloc system --keep-empty" remove-new
echo ok
