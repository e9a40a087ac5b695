// SPDX-License-Identifier: GPL-2.0-only
// Byte views that are not disk structures: the same bytes seen as char for C
// interfaces that take char buffers (lz4, std::string), and pointer
// alignment (O_DIRECT buffers). Written without reinterpret_cast, so the
// source lint's disk-cast rule (tests/lint/source_lint.py) admits no cast in
// lib/ outside lib/format: char may alias any object ([basic.lval]), and a
// pointer's address is its bit pattern (std::bit_cast).
#pragma once
#include <bit>
#include <cstdint>

#include "lib/base/ints.h"

namespace fsctl {

/// `p` seen as char (the same bytes).
[[nodiscard]] inline char* as_chars(u8* p) { return static_cast<char*>(static_cast<void*>(p)); }
[[nodiscard]] inline const char* as_chars(const u8* p) { return static_cast<const char*>(static_cast<const void*>(p)); }

/// Whether `p` is a multiple of `alignment` (bytes; REQUIRES: alignment > 0).
[[nodiscard]] inline bool is_aligned(const void* p, std::size_t alignment) {
  return std::bit_cast<std::uintptr_t>(p) % alignment == 0;
}

}  // namespace fsctl
