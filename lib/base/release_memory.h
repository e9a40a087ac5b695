// SPDX-License-Identifier: GPL-2.0-only
// How the process gives freed heap memory back to the kernel (DESIGN.md
// invariant 5, bounded memory): limit_heap_retention at start-up, and
// release_free_memory when the resident set nears its bound.
#pragma once

#include <unistd.h>

#include <cstddef>  // any C library header defines __GLIBC__ (glibc's <features.h>)
#include <cstdio>

#include "lib/base/ints.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace fsctl {

/// Bytes of free memory at the top of the heap past which glibc's free()
/// gives it back to the kernel (its default, 128 KiB, grows to up to 32 MiB
/// as large buffers are freed; a fixed value keeps it from growing).
inline constexpr int HEAP_TRIM_THRESHOLD = 1 << 20;

/// Called once, first thing in main(), before any thread starts: one malloc
/// arena for every thread (glibc's M_ARENA_MAX) and a fixed trim threshold
/// (M_TRIM_THRESHOLD). Tree blocks are read into memory by the read-ahead
/// and checksum threads and freed by the main thread: with an arena per
/// thread each freed block goes back to its reader's arena, where the next
/// allocation of the main thread cannot reuse it, so every arena holds its
/// own high-water mark (a balance -m of 1,600 snapshots peaked at 288 MiB
/// with --cache-size 192M; bench/RESULTS.md has the run with one arena).
/// Nothing with another C library or under a sanitizer (which has its own
/// allocator). Returns whether the settings took effect.
inline bool limit_heap_retention() {
#if defined(__GLIBC__)
  return mallopt(M_ARENA_MAX, 1) == 1 && mallopt(M_TRIM_THRESHOLD, HEAP_TRIM_THRESHOLD) == 1;
#else
  return false;
#endif
}

/// Gives the pages of freed heap memory back to the kernel (glibc's
/// malloc_trim; nothing with another C library), so that memory freed in
/// many small blocks (evicted tree blocks, a finished transaction's) is not
/// counted again beside a large buffer allocated after it (DESIGN.md
/// invariant 5, bounded memory). Costs a walk of the heap: about 16 ms after
/// a balance of 17,623 blocks; call it before a large allocation, not per
/// block.
inline void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

/// What a command may hold beyond its --cache-size (DESIGN.md invariant 5:
/// peak RSS <= --cache-size + 64 MiB).
inline constexpr u64 MEMORY_ALLOWANCE_BYTES = 64ULL << 20;

/// The resident set size of this process in bytes, from the second field of
/// /proc/self/statm (pages; proc(5)); 0 when it cannot be read.
inline u64 resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  long page = sysconf(_SC_PAGESIZE);
  return n == 2 && page > 0 ? resident * static_cast<u64>(page) : 0;
}

}  // namespace fsctl
