// SPDX-License-Identifier: GPL-2.0-only
// When fsctl re-executes itself for transparent huge pages on the heap
// (cmd/heap_pages.h), and the GLIBC_TUNABLES it passes on.
#include "cmd/heap_pages.h"

#include <doctest/doctest.h>

#include <string>

using fsctl::cmd::tunables_with_heap_hugepages;
using fsctl::cmd::wants_heap_hugepages;

namespace {
constexpr const char* MADVISE = "always [madvise] never\n";
constexpr const char* ALWAYS = "[always] madvise never\n";
constexpr const char* NEVER = "always madvise [never]\n";
}  // namespace

TEST_CASE("wants_heap_hugepages: only where the kernel gives huge pages on advice") {
  CHECK(wants_heap_hugepages(nullptr, nullptr, MADVISE));
  CHECK_FALSE(wants_heap_hugepages(nullptr, nullptr, ALWAYS));  // the kernel gives them unasked
  CHECK_FALSE(wants_heap_hugepages(nullptr, nullptr, NEVER));
  CHECK_FALSE(wants_heap_hugepages(nullptr, nullptr, ""));  // no THP file
}

TEST_CASE("wants_heap_hugepages: once, and not when turned off") {
  // After the re-exec the tunable is set: no second round.
  CHECK_FALSE(wants_heap_hugepages("glibc.malloc.hugetlb=1", nullptr, MADVISE));
  // A user's own choice of the tunable stands.
  CHECK_FALSE(wants_heap_hugepages("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0", nullptr, MADVISE));
  CHECK(wants_heap_hugepages("glibc.malloc.arena_max=2", nullptr, MADVISE));
  CHECK_FALSE(wants_heap_hugepages(nullptr, "0", MADVISE));
  CHECK(wants_heap_hugepages(nullptr, "1", MADVISE));
}

TEST_CASE("tunables_with_heap_hugepages keeps the user's tunables") {
  const std::string ours = "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:glibc.malloc.top_pad=67108864";
  CHECK(tunables_with_heap_hugepages(nullptr) == ours);
  CHECK(tunables_with_heap_hugepages("") == ours);
  CHECK(tunables_with_heap_hugepages("glibc.malloc.arena_max=2") == "glibc.malloc.arena_max=2:" + ours);
  // A threshold or pad the user chose stands; only the others are added.
  CHECK(tunables_with_heap_hugepages("glibc.malloc.top_pad=0") ==
        "glibc.malloc.top_pad=0:glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432");
  // The re-executed process sees its own tunable and stops there.
  CHECK_FALSE(wants_heap_hugepages(tunables_with_heap_hugepages("glibc.malloc.arena_max=2").c_str(), nullptr, MADVISE));
}
