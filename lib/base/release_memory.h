// SPDX-License-Identifier: GPL-2.0-only
// release_free_memory: gives freed heap pages back to the kernel.
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace fsctl {

/// Gives the pages of freed heap memory back to the kernel (glibc's
/// malloc_trim; nothing with another C library), so that memory freed in
/// many small blocks (evicted tree blocks, a finished transaction's) is not
/// counted again beside a large buffer allocated after it (DESIGN.md
/// invariant 5, bounded memory). Costs a walk of the heap: about 16 ms after
/// a balance of 17,623 blocks; call it before a large allocation, not per
/// block.
inline void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace fsctl
