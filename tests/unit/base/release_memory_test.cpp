// SPDX-License-Identifier: GPL-2.0-only
// limit_heap_retention and resident_bytes (lib/base/release_memory.h).
// After limit_heap_retention, memory a
// worker thread allocates comes from the one arena the main thread uses, so
// blocks read by the read-ahead threads and freed by the main thread are
// reused instead of each arena keeping its own high-water mark. Counted with
// glibc's malloc_info (one <heap nr=...> element per arena). Under a
// sanitizer, or without glibc, malloc is not glibc's: the case says so and
// checks nothing.
#include "lib/base/release_memory.h"
#include "lib/base/sanitizer.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {
#if defined(__GLIBC__)
/// Arenas glibc's malloc has made so far: <heap nr="N"> elements of malloc_info.
int malloc_arenas() {
  char* text = nullptr;
  std::size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  REQUIRE(f != nullptr);
  malloc_info(0, f);
  std::fclose(f);
  std::string s(text, len);
  std::free(text);
  int n = 0;
  for (std::size_t at = s.find("<heap nr="); at != std::string::npos; at = s.find("<heap nr=", at + 1)) ++n;
  return n;
}
#endif
}  // namespace

TEST_CASE("limit_heap_retention: worker threads allocate from the main arena") {
#if defined(__GLIBC__)
  if (fsctl::BUILT_WITH_SANITIZER) {
    MESSAGE("malloc is the sanitizer's here, not glibc's: nothing to check");
    return;
  }
  REQUIRE(fsctl::limit_heap_retention());
  const int before = malloc_arenas();
  // Two threads at once, as the read-ahead threads of a balance, each
  // holding 4 MiB of tree-block-sized allocations.
  auto work = [] {
    std::vector<void*> blocks;
    for (int i = 0; i < 256; ++i) blocks.push_back(std::malloc(16384));
    for (void* b : blocks) std::free(b);
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  CHECK(malloc_arenas() == before);
  CHECK(before == 1);
#else
  MESSAGE("malloc is not glibc's here (another C library): nothing to check");
#endif
}

// resident_bytes reads the resident set: 32 MiB touched show in it.
TEST_CASE("resident_bytes: memory touched is counted") {
  const fsctl::u64 before = fsctl::resident_bytes();
  REQUIRE(before > 0);
  std::vector<char> touched(32u << 20, 1);
  const fsctl::u64 after = fsctl::resident_bytes();
  CHECK(after >= before + (24u << 20));
  CHECK(touched[touched.size() - 1] == 1);
}
