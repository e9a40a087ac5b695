# shellcheck shell=bash
# cmake_generator DIR: sets GENERATOR (cmake arguments) to Ninja when ninja
# is installed, else to CMake's default (Unix Makefiles). A build directory
# made with the other generator is reconfigured from scratch (CMake refuses
# to switch generators in place). Sourced by build.sh and fuzz.sh.
cmake_generator() {
  local dir=$1 want=
  GENERATOR=()
  if command -v ninja > /dev/null; then GENERATOR=(-G Ninja); want=Ninja; else want="Unix Makefiles"; fi
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -qx "CMAKE_GENERATOR:INTERNAL=$want" "$dir/CMakeCache.txt"; then
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
}
