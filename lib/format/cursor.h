// SPDX-License-Identifier: GPL-2.0-only
// Cursor: a bounds-checked reader over item bytes. Every overrun is
// Errc::corrupt, never undefined behaviour (STYLE.md "On-disk structures").
#pragma once
#include <span>
#include <string>

#include "lib/base/result.h"

namespace fsctl::format {

class Cursor {
 public:
  explicit Cursor(std::span<const u8> bytes) : b_(bytes) {}
  [[nodiscard]] std::size_t remaining() const { return b_.size() - pos_; }
  [[nodiscard]] std::size_t pos() const { return pos_; }
  /// Pointer to a T (an alignment-1 on-disk struct) at the cursor, then advances.
  /// Errors: Errc::corrupt naming `what` when fewer than sizeof(T) bytes remain.
  template <typename T>
  [[nodiscard]] Result<const T*> take(const char* what) {
    static_assert(alignof(T) == 1, "on-disk structs must have alignment 1");
    if (remaining() < sizeof(T)) return overrun(what, sizeof(T));
    const T* p = reinterpret_cast<const T*>(b_.data() + pos_);
    pos_ += sizeof(T);
    return p;
  }
  /// The next n bytes, then advances. Errors: Errc::corrupt.
  [[nodiscard]] Result<std::span<const u8>> bytes(std::size_t n, const char* what) {
    if (remaining() < n) return overrun(what, n);
    auto s = b_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  [[nodiscard]] Result<u8> u8_(const char* what) {
    if (remaining() < 1) return overrun(what, 1);
    return b_[pos_++];
  }

 private:
  tl::unexpected<Error> overrun(const char* what, std::size_t need) const {
    return make_error(Errc::corrupt, std::string(what) + " needs " + std::to_string(need) + " bytes at item offset " +
                                         std::to_string(pos_) + ", only " + std::to_string(remaining()) + " left");
  }
  std::span<const u8> b_;
  std::size_t pos_ = 0;
};

}  // namespace fsctl::format
