// SPDX-License-Identifier: GPL-2.0-only
// Transparent huge pages for the heap: fsctl re-executes itself once, first
// thing in main(), with glibc's malloc tunable glibc.malloc.hugetlb=1 in
// GLIBC_TUNABLES, so that glibc asks the kernel for huge pages
// (madvise(MADV_HUGEPAGE)) on the memory it takes for the heap. Tunables are
// read by the dynamic loader before main() runs, hence the re-exec; the
// kernel's setting /sys/kernel/mm/transparent_hugepage/enabled decides
// whether it can help ("[madvise]": only with the advice).
//
// Why: a balance or a convert fills hundreds of MiB of fresh memory with
// tree blocks, and each first touch of a 4 KiB page is a page fault. On a
// virtual machine a fault costs about 10 us: balance -m of balance-16snap-4k
// took 68,500 faults and 1.7-2.3 s, with huge pages 2,400 faults and
// 1.0-1.15 s at the same peak RSS (bench/RESULTS.md, 2026-12-06).
//
// FSCTL_HUGEPAGES=0 in the environment turns it off.
#pragma once

#include <string>
#include <string_view>

namespace fsctl::cmd {

/// The glibc tunable fsctl sets (glibc >= 2.35; older versions ignore it).
inline constexpr std::string_view HEAP_HUGETLB_TUNABLE = "glibc.malloc.hugetlb=1";

/// Whether to re-execute with HEAP_HUGETLB_TUNABLE. tunables is the current
/// GLIBC_TUNABLES (nullptr: unset), opt_out FSCTL_HUGEPAGES (nullptr: unset;
/// "0" turns it off), thp_enabled the text of
/// /sys/kernel/mm/transparent_hugepage/enabled (empty: unreadable). True only
/// when the kernel gives huge pages on advice ("[madvise]" selected), no
/// malloc.hugetlb tunable is set yet (which also ends the re-exec after one
/// round) and it is not turned off.
bool wants_heap_hugepages(const char* tunables, const char* opt_out, std::string_view thp_enabled);

/// GLIBC_TUNABLES with HEAP_HUGETLB_TUNABLE appended (':' separates
/// tunables; nullptr or empty: the tunable alone).
std::string tunables_with_heap_hugepages(const char* tunables);

/// Re-executes /proc/self/exe with argv and GLIBC_TUNABLES extended when
/// wants_heap_hugepages says so; returns (having changed nothing) when it
/// does not, under a sanitizer (its own allocator), without glibc, or when
/// the exec fails. Call first in main(), before any thread or open file.
void reexec_with_heap_hugepages(char** argv);

}  // namespace fsctl::cmd
