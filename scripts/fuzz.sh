#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) and runs each for N
# seconds (default 45) from its seed corpus. Fails on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-45}
if [ ! -d tests/fuzz ] || [ ! -f tests/fuzz/CMakeLists.txt ]; then echo "fuzz: no targets"; exit 0; fi
# Ninja where installed and line tables only (-g1), as scripts/build.sh asan;
# -O1 as in the libFuzzer documentation's build lines (and faster to build in CI).
source scripts/generator.sh
cmake_generator build-fuzz
CXX=clang++ cmake -S . -B build-fuzz "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DFSCTL_FUZZ=ON -DFSCTL_WERROR=ON -DBUILD_TESTING=OFF >/dev/null
# Only the fuzz targets (and the layers they link): the rest of the tree is
# built with -Werror by the ASan build already, and building it with clang too
# cost CI minutes.
cmake --build build-fuzz -j"$(nproc)" --target fuzz_super fuzz_tree_block fuzz_open >/dev/null
for t in build-fuzz/tests/fuzz/fuzz_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  corpus=build-fuzz/corpus-$name
  mkdir -p "$corpus"
  [ -d "tests/fuzz/seeds/$name" ] && cp -n tests/fuzz/seeds/"$name"/* "$corpus"/ 2>/dev/null || true
  echo "fuzz: $name for ${secs}s"
  "$t" -max_total_time="$secs" -print_final_stats=0 "$corpus" >"build-fuzz/$name.log" 2>&1 || { tail -50 "build-fuzz/$name.log"; echo "fuzz: $name found a problem"; exit 1; }
  grep -E "^#[0-9]+[[:space:]]+DONE" "build-fuzz/$name.log" | tail -1 || true
done
