// SPDX-License-Identifier: GPL-2.0-only
// What every item codec of lib/format shares (STYLE.md "On-disk structures"):
// the one size rule per item, with the one message form ("<what> of N bytes,
// expect M"), and copies between item bytes and the alignment-1 structs of
// items.h. Included by the codec .cpp files only; callers outside lib/format
// use the typed codecs (block_group_item.h, file_extent.h, ...).
#pragma once
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::format::detail {

/// Errc::corrupt "<what> of N bytes, expect at least M" unless
/// data.size() >= need. Used for items whose tail the kernel may grow
/// (root item v1/v2, qgroup status 32/40) or that fsctl reads a prefix of.
[[nodiscard]] inline Status check_size_at_least(std::span<const u8> data, std::size_t need, std::string_view what) {
  if (data.size() >= need) return {};
  return make_error(Errc::corrupt, std::string(what) + " of " + std::to_string(data.size()) + " bytes, expect at least " +
                                       std::to_string(need));
}

/// Errc::corrupt "<what> of N bytes, expect M" unless data.size() == need
/// (items whose size the kernel's tree checker fixes exactly).
[[nodiscard]] inline Status check_size_exact(std::span<const u8> data, std::size_t need, std::string_view what) {
  if (data.size() == need) return {};
  return make_error(Errc::corrupt, std::string(what) + " of " + std::to_string(data.size()) + " bytes, expect " +
                                       std::to_string(need));
}

/// Copies the on-disk struct T out of the first sizeof(T) bytes of `data`.
/// REQUIRES: data.size() >= sizeof(T) (checked by the caller's size rule).
template <typename T>
[[nodiscard]] T load_struct(std::span<const u8> data) {
  static_assert(alignof(T) == 1 && std::is_trivially_copyable_v<T>, "on-disk structs have alignment 1");
  T v{};
  std::memcpy(&v, data.data(), sizeof v);
  return v;
}

/// Writes the on-disk struct T over the first sizeof(T) bytes of `data`.
/// REQUIRES: data.size() >= sizeof(T).
template <typename T>
void store_struct(std::span<u8> data, const T& v) {
  static_assert(alignof(T) == 1 && std::is_trivially_copyable_v<T>, "on-disk structs have alignment 1");
  std::memcpy(data.data(), &v, sizeof v);
}

/// The bytes of the on-disk struct T.
template <typename T>
[[nodiscard]] std::vector<u8> struct_bytes(const T& v) {
  static_assert(alignof(T) == 1 && std::is_trivially_copyable_v<T>, "on-disk structs have alignment 1");
  std::vector<u8> out(sizeof v);
  std::memcpy(out.data(), &v, sizeof v);
  return out;
}

}  // namespace fsctl::format::detail
