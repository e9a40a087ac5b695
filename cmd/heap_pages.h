// SPDX-License-Identifier: GPL-2.0-only
// Transparent huge pages for the heap: fsctl re-executes itself once, first
// thing in main(), with glibc's malloc tunable glibc.malloc.hugetlb=1 in
// GLIBC_TUNABLES, so that glibc asks the kernel for huge pages
// (madvise(MADV_HUGEPAGE)) on the memory it takes for the heap, and with
// glibc.malloc.mmap_threshold=32 MiB and glibc.malloc.top_pad=64 MiB, so
// that the heap grows in large steps (fewer brk calls and first touches)
// and buffers up to 32 MiB come from it instead of from fresh mmaps. Tunables are
// read by the dynamic loader before main() runs, hence the re-exec; the
// kernel's setting /sys/kernel/mm/transparent_hugepage/enabled decides
// whether it can help ("[madvise]": only with the advice).
//
// Why: a balance or a convert fills hundreds of MiB of fresh memory with
// tree blocks, and each first touch of a 4 KiB page is a page fault. On a
// virtual machine a fault costs about 10 us: balance -m of balance-16snap-4k
// took 68,500 faults and 1.7-2.3 s, with huge pages 2,400 faults and
// 1.0-1.15 s at the same peak RSS (bench/RESULTS.md, 2026-12-06). The
// threshold and the pad took 0.1-0.4 s more off balance -m of
// balance-16snap-4k and bg-8T-16k at 1-5 MiB more peak RSS (2026-12-07);
// bench/memory.sh shows every command within its bound with them.
//
// FSCTL_HUGEPAGES=0 in the environment turns it off.
#pragma once

#include <string>
#include <string_view>

namespace fsctl::cmd {

/// The glibc tunable that asks for huge pages (glibc >= 2.35; older
/// versions ignore it); its presence in GLIBC_TUNABLES ends the re-exec.
inline constexpr std::string_view HEAP_HUGETLB_TUNABLE = "glibc.malloc.hugetlb=1";

/// Every tunable fsctl sets: HEAP_HUGETLB_TUNABLE, the mmap threshold (32
/// MiB) and the top pad (64 MiB; the untouched part of it is not resident).
inline constexpr std::string_view HEAP_TUNABLES[] = {HEAP_HUGETLB_TUNABLE, "glibc.malloc.mmap_threshold=33554432",
                                                     "glibc.malloc.top_pad=67108864"};

/// Whether to re-execute with HEAP_HUGETLB_TUNABLE. tunables is the current
/// GLIBC_TUNABLES (nullptr: unset), opt_out FSCTL_HUGEPAGES (nullptr: unset;
/// "0" turns it off), thp_enabled the text of
/// /sys/kernel/mm/transparent_hugepage/enabled (empty: unreadable). True only
/// when the kernel gives huge pages on advice ("[madvise]" selected), no
/// malloc.hugetlb tunable is set yet (which also ends the re-exec after one
/// round) and it is not turned off.
bool wants_heap_hugepages(const char* tunables, const char* opt_out, std::string_view thp_enabled);

/// GLIBC_TUNABLES with each of HEAP_TUNABLES appended that it does not set
/// already (':' separates tunables; nullptr or empty: HEAP_TUNABLES alone).
std::string tunables_with_heap_hugepages(const char* tunables);

/// Re-executes /proc/self/exe with argv and GLIBC_TUNABLES extended when
/// wants_heap_hugepages says so; returns (having changed nothing) when it
/// does not, under a sanitizer (its own allocator), without glibc, or when
/// the exec fails. Call first in main(), before any thread or open file.
void reexec_with_heap_hugepages(char** argv);

}  // namespace fsctl::cmd
