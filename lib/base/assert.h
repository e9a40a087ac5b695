// SPDX-License-Identifier: GPL-2.0-only
// FSCTL_ASSERT: programmer errors only; disk contents are never asserted on.
#pragma once
#include <cstdio>
#include <cstdlib>

#define FSCTL_ASSERT(cond)                                                        \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "fsctl: assertion failed: %s at %s:%d\n", #cond,      \
                   __FILE__, __LINE__);                                           \
      std::abort();                                                               \
    }                                                                             \
  } while (0)
