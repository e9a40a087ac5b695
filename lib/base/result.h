// SPDX-License-Identifier: GPL-2.0-only
// Result<T>/Status and Error with a category and a context chain. Wraps
// tl::expected once so a move to std::expected is a one-file change.
// Expected failures never throw across the library (STYLE.md "Errors").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace fsctl {

/// Category of a failure; cmd/ maps it to an exit code.
enum class Errc {
  io,                // read/write/open failed; Error::sys_errno holds errno
  csum,              // checksum mismatch on a superblock or tree block
  corrupt,           // metadata violates a format rule
  nospc,             // not enough space for the operation
  unsupported,       // valid but not handled (feature, profile)
  busy,              // device mounted or in use
  invalid_argument,  // bad user input
  not_found,         // a looked-up item or device does not exist
  aborted,           // an operation was stopped (fail point, abort)
};

/// A failure: category, errno (for Errc::io, else 0) and a message whose
/// front grows with context as it travels up ("opening X: reading Y: ...").
struct Error {
  Errc code = Errc::corrupt;
  int sys_errno = 0;
  std::string message;
  /// What the failure is about, where the code that found it knows it (the
  /// JSON error document of cmd/ reports them): the logical bytenr of a tree
  /// block, the devid of a device. The innermost setter wins.
  std::optional<std::uint64_t> bytenr = std::nullopt;
  std::optional<std::uint64_t> devid = std::nullopt;

  /// Returns a copy with "ctx: " prepended to the message.
  [[nodiscard]] Error context(const std::string& ctx) const {
    Error e = *this;
    e.message = ctx + ": " + message;
    return e;
  }
  /// Returns a copy naming tree block `b`, unless one is named already.
  [[nodiscard]] Error about_bytenr(std::uint64_t b) const {
    Error e = *this;
    if (!e.bytenr) e.bytenr = b;
    return e;
  }
  /// Returns a copy naming device `id`, unless one is named already.
  [[nodiscard]] Error about_devid(std::uint64_t id) const {
    Error e = *this;
    if (!e.devid) e.devid = id;
    return e;
  }
};

template <typename T>
using Result = tl::expected<T, Error>;
using Status = Result<void>;

/// Builds an unexpected Error value: `return make_error(Errc::corrupt, "...")`.
inline tl::unexpected<Error> make_error(Errc code, std::string message, int sys_errno = 0) {
  return tl::unexpected<Error>(Error{code, sys_errno, std::move(message)});
}
inline tl::unexpected<Error> make_error(Error e) { return tl::unexpected<Error>(std::move(e)); }

/// Adds context to the error of a Result, passing a value through unchanged.
template <typename T>
[[nodiscard]] Result<T> with_context(Result<T> r, const std::string& ctx) {
  if (!r) return tl::unexpected<Error>(r.error().context(ctx));
  return r;
}

}  // namespace fsctl

#define FSCTL_CONCAT_INNER(a, b) a##b
#define FSCTL_CONCAT(a, b) FSCTL_CONCAT_INNER(a, b)

/// Returns the error of `expr` (a Result) from the enclosing function.
#define FSCTL_TRY(expr)                                              \
  do {                                                               \
    auto fsctl_try_r_ = (expr);                                      \
    if (!fsctl_try_r_) return ::fsctl::make_error(std::move(fsctl_try_r_).error()); \
  } while (0)

/// `FSCTL_TRY_ASSIGN(auto x, f())`: declares/assigns the value or returns the error.
#define FSCTL_TRY_ASSIGN(lhs, expr)                                           \
  auto FSCTL_CONCAT(fsctl_try_a_, __LINE__) = (expr);                         \
  if (!FSCTL_CONCAT(fsctl_try_a_, __LINE__))                                  \
    return ::fsctl::make_error(std::move(FSCTL_CONCAT(fsctl_try_a_, __LINE__)).error()); \
  lhs = std::move(*FSCTL_CONCAT(fsctl_try_a_, __LINE__))
