// SPDX-License-Identifier: GPL-2.0-only
// The four btrfs checksum types (kernel btrfs_csums[]): crc32c, xxhash64,
// sha256, blake2b-256, computed with well-kept libraries (ISA-L, libxxhash,
// libsodium) — no hand-written hashing.
#pragma once
#include <array>
#include <span>
#include <string>

#include "lib/base/ints.h"

namespace fsctl::format {

inline constexpr u16 CSUM_TYPE_CRC32 = 0, CSUM_TYPE_XXHASH = 1, CSUM_TYPE_SHA256 = 2, CSUM_TYPE_BLAKE2 = 3;

/// A checksum as stored: 32 bytes, of which the first csum_size(type) count.
using CsumBytes = std::array<u8, 32>;

/// True for the four known types.
[[nodiscard]] bool csum_type_known(u16 csum_type);
/// Stored size in bytes: 4, 8, 32, 32. REQUIRES: csum_type_known(csum_type).
[[nodiscard]] std::size_t csum_size(u16 csum_type);
/// "crc32c", "xxhash64", "sha256", "blake2b" (dump-super's names), or "unknown".
[[nodiscard]] std::string csum_type_name(u16 csum_type);
/// Checksum of `data` as btrfs stores it (crc32c: seed ~0, final inversion,
/// little-endian; xxhash64: seed 0, little-endian; sha256; blake2b 32-byte
/// digest, unkeyed). Bytes past csum_size are zero. REQUIRES: known type.
[[nodiscard]] CsumBytes compute_csum(u16 csum_type, std::span<const u8> data);
/// Raw crc32c update without inversions (for hash_extent_data_ref).
[[nodiscard]] u32 crc32c_raw(u32 seed, std::span<const u8> data);
/// Hex text of the first csum_size(type) bytes (for "has X expect Y" messages).
[[nodiscard]] std::string csum_to_hex(u16 csum_type, std::span<const u8> csum);

}  // namespace fsctl::format
