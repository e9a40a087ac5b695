// SPDX-License-Identifier: GPL-2.0-only
// Replays saved inputs through a fuzz target built without libFuzzer (g++,
// the ASan build in CI): `replay_fuzz_X DIR...` runs LLVMFuzzerTestOneInput
// on every file of each DIR (tests/fuzz/regressions/<target>, then the
// seeds). A crash, sanitizer report or uncaught exception fails the test.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  std::size_t n = 0;
  for (int a = 1; a < argc; ++a) {
    std::error_code ec;
    if (!std::filesystem::is_directory(argv[a], ec)) continue;
    for (auto& e : std::filesystem::directory_iterator(argv[a])) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::printf("replay %s (%zu bytes)\n", e.path().c_str(), bytes.size());
      std::fflush(stdout);
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++n;
    }
  }
  std::printf("replayed %zu inputs\n", n);
  return 0;
}
