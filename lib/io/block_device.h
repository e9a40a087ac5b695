// SPDX-License-Identifier: GPL-2.0-only
// BlockDevice: the one I/O interface (real, in-memory and fault-injecting
// implementations). Offsets are physical byte offsets on the device.
#pragma once
#include <memory>
#include <span>
#include <string>

#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::io {

/// read_at may be called from several threads at once (streaming read-ahead);
/// write_at and flush only from one.
class BlockDevice {
 public:
  virtual ~BlockDevice() = default;
  /// Reads buf.size() bytes at `physical`. Any offset/length is accepted; the
  /// implementation handles alignment. Errors: Errc::io (errno set) or
  /// Errc::corrupt when the range lies past the end of the device.
  [[nodiscard]] virtual Status read_at(u64 physical, std::span<u8> buf) = 0;
  /// Writes buf at `physical`. REQUIRES: the device was opened for writing.
  /// Errors: Errc::io, Errc::aborted (fault injection).
  [[nodiscard]] virtual Status write_at(u64 physical, std::span<const u8> buf) = 0;
  /// Makes completed writes durable (fdatasync). Errors: Errc::io.
  [[nodiscard]] virtual Status flush() = 0;
  /// Size in bytes.
  [[nodiscard]] virtual u64 size() const = 0;
  /// Alignment O_DIRECT needs (the logical block size), in bytes.
  [[nodiscard]] virtual u32 logical_block_size() const = 0;
  /// Name for messages (the path given by the user).
  [[nodiscard]] virtual const std::string& path() const = 0;
};

}  // namespace fsctl::io
