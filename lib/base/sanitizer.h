// SPDX-License-Identifier: GPL-2.0-only
// Whether this build runs under a sanitizer (ASan, TSan, MSan), which brings
// its own allocator and its own leak check: code that tunes glibc's malloc or
// leaves memory to the process exit does neither under one.
#pragma once

namespace fsctl {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool BUILT_WITH_SANITIZER = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
inline constexpr bool BUILT_WITH_SANITIZER = true;
#else
inline constexpr bool BUILT_WITH_SANITIZER = false;
#endif
#else
inline constexpr bool BUILT_WITH_SANITIZER = false;
#endif

}  // namespace fsctl
