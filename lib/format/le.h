// SPDX-License-Identifier: GPL-2.0-only
// Little-endian integer wrappers: byte arrays with get()/set(), alignment 1, so
// on-disk structs built from them overlay any byte offset without UB.
#pragma once
#include <bit>
#include <cstring>

#include "lib/base/ints.h"

namespace fsctl::format {

/// Reads a little-endian integer of type T at p (no alignment needed). On a
/// little-endian host one unaligned load (memcpy); the byte loop elsewhere.
/// The loop alone was not merged into a load by GCC 12: callgrind counted
/// 360 instructions per file extent item decoded (bench/RESULTS.md).
template <typename T>
[[nodiscard]] inline T load_le(const u8* p) {
  T v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, sizeof v);
  } else {
    for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>(v | (static_cast<T>(p[i]) << (8 * i)));
  }
  return v;
}
/// Writes a little-endian integer of type T at p.
template <typename T>
inline void store_le(u8* p, T v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, sizeof v);
  } else {
    for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<u8>(v >> (8 * i));
  }
}

template <typename T>
struct Le {
  u8 bytes[sizeof(T)];
  [[nodiscard]] T get() const { return load_le<T>(bytes); }
  void set(T v) { store_le<T>(bytes, v); }
};
using le16 = Le<u16>;
using le32 = Le<u32>;
using le64 = Le<u64>;
static_assert(sizeof(le64) == 8 && alignof(le64) == 1);

}  // namespace fsctl::format
