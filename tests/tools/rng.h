// SPDX-License-Identifier: GPL-2.0-only
// Rng: splitmix64, the seeded generator of the test tools and unit tests:
// deterministic on every platform and library (std distributions are not).
#pragma once
#include "lib/base/ints.h"

namespace fsctl::testing {

struct Rng {
  u64 s;
  u64 next() {
    u64 z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform-ish in [0, n); 0 when n is 0.
  u64 below(u64 n) { return n ? next() % n : 0; }
  /// In [lo, hi], both inclusive.
  u64 range(u64 lo, u64 hi) { return lo + below(hi - lo + 1); }
  /// True `percent` times in 100.
  bool chance(u64 percent) { return below(100) < percent; }
};

}  // namespace fsctl::testing
