// SPDX-License-Identifier: GPL-2.0-only
// BlockDevice: the one I/O interface (real, in-memory and fault-injecting
// implementations). Offsets are physical byte offsets on the device.
#pragma once
#include <functional>
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
  /// Errors: Errc::io (also a write a FaultDevice drops after its fail point).
  [[nodiscard]] virtual Status write_at(u64 physical, std::span<const u8> buf) = 0;
  /// Makes completed writes durable (fdatasync). Errors: Errc::io (also a
  /// FaultDevice after its fail point).
  [[nodiscard]] virtual Status flush() = 0;
  /// Size in bytes.
  [[nodiscard]] virtual u64 size() const = 0;
  /// Alignment O_DIRECT needs (the logical block size), in bytes.
  [[nodiscard]] virtual u32 logical_block_size() const = 0;
  /// Name for messages (the path given by the user).
  [[nodiscard]] virtual const std::string& path() const = 0;
};

/// A decorator applied to each device an open sequence opens (e2fsprogs
/// io_manager stacking: a fault-injecting or recording device is one more
/// layer over the real one). Takes the device, returns the one to use.
using DeviceWrapper = std::function<std::unique_ptr<BlockDevice>(std::unique_ptr<BlockDevice>)>;

/// Stacks two wrappers: `inner` wraps the device first, `outer` wraps the
/// result. An empty wrapper is left out (both empty: an empty wrapper).
[[nodiscard]] inline DeviceWrapper compose_wrappers(DeviceWrapper inner, DeviceWrapper outer) {
  if (!inner) return outer;
  if (!outer) return inner;
  return [inner = std::move(inner), outer = std::move(outer)](std::unique_ptr<BlockDevice> d) { return outer(inner(std::move(d))); };
}

}  // namespace fsctl::io
