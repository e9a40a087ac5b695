// SPDX-License-Identifier: GPL-2.0-only
// Fixed-width integer aliases used throughout the format and tree code, as the
// kernel's u8..u64. Lowest layer: includes nothing of the project.
#pragma once
#include <cstddef>
#include <cstdint>

namespace fsctl {
using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s64 = std::int64_t;
/// Binary size units in bytes.
inline constexpr u64 KiB = 1ULL << 10, MiB = 1ULL << 20, GiB = 1ULL << 30;
}  // namespace fsctl
