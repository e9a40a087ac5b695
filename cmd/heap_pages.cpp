// SPDX-License-Identifier: GPL-2.0-only
// Transparent huge pages for the heap (heap_pages.h).
#include "cmd/heap_pages.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "lib/base/sanitizer.h"

namespace fsctl::cmd {

namespace {

constexpr const char* THP_ENABLED_PATH = "/sys/kernel/mm/transparent_hugepage/enabled";

}  // namespace

bool wants_heap_hugepages(const char* tunables, const char* opt_out, std::string_view thp_enabled) {
  if (opt_out && std::strcmp(opt_out, "0") == 0) return false;
  if (tunables && std::string_view(tunables).find("glibc.malloc.hugetlb") != std::string_view::npos) return false;
  return thp_enabled.find("[madvise]") != std::string_view::npos;
}

std::string tunables_with_heap_hugepages(const char* tunables) {
  std::string s = tunables ? tunables : "";
  for (std::string_view t : HEAP_TUNABLES) {
    // A tunable the user set (its name followed by '=') stands.
    std::string_view name = t.substr(0, t.find('=') + 1);
    if (s.find(name) != std::string::npos) continue;
    if (!s.empty()) s += ':';
    s += t;
  }
  return s;
}

void reexec_with_heap_hugepages(char** argv) {
#if defined(__GLIBC__)
  if (BUILT_WITH_SANITIZER || !argv || !argv[0]) return;
  std::ifstream f(THP_ENABLED_PATH);
  std::string thp((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const char* old = std::getenv("GLIBC_TUNABLES");
  if (!wants_heap_hugepages(old, std::getenv("FSCTL_HUGEPAGES"), thp)) return;
  std::string saved = old ? old : "";
  bool had = old != nullptr;
  if (setenv("GLIBC_TUNABLES", tunables_with_heap_hugepages(old).c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // The exec failed (no /proc, say): run on without huge pages, the
  // environment as it was.
  if (had)
    setenv("GLIBC_TUNABLES", saved.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

}  // namespace fsctl::cmd
