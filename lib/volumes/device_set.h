// SPDX-License-Identifier: GPL-2.0-only
// DeviceSet: the devices of one filesystem, by devid, each with its chosen
// superblock copy; superblock mirror reading (kernel btrfs_read_dev_super with
// SBREAD_RECOVER semantics: newest valid copy wins, damaged ones reported).
#pragma once
#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/base/reporter.h"
#include "lib/format/super.h"
#include "lib/io/block_device.h"
#include "lib/io/direct_device.h"

namespace fsctl::volumes {

/// What was found at one superblock location of a device.
struct SuperCopyState {
  int mirror = 0;
  u64 physical = 0;
  bool fits = false;   // the copy lies inside the device
  bool valid = false;  // magic, csum, bytenr and fields ok
  u64 generation = 0;
  std::string problem; // why it is not valid (empty when valid or not fitting)
};

/// One opened device.
struct Device {
  u64 devid = 0;
  std::array<u8, format::UUID_SIZE> uuid{};
  std::string path;
  std::unique_ptr<io::BlockDevice> dev;
  format::SuperBlock super{};         // newest valid copy on this device
  int super_mirror = 0;               // which copy that was
  std::vector<SuperCopyState> copies; // every location, for dump-super --all-mirrors
};

/// Reads every superblock copy that fits `dev` and picks the valid one with
/// the highest generation. Errors: Errc::corrupt / Errc::csum /
/// Errc::unsupported from the primary's problem when no copy is valid (the
/// message lists each copy's problem).
[[nodiscard]] Result<Device> read_device_supers(std::unique_ptr<io::BlockDevice> dev);

class DeviceSet {
 public:
  /// Opens every path, reads its superblocks, and checks that all belong to
  /// one filesystem (same fsid) with distinct devids. Warns through
  /// `reporter` about damaged or stale copies and devices whose generation
  /// lags. Errors: Errc::io, Errc::busy (write open of a mounted device),
  /// Errc::invalid_argument (a device of another filesystem, a duplicate
  /// devid), and those of read_device_supers, each prefixed with the path.
  [[nodiscard]] static Result<DeviceSet> open(const std::vector<std::string>& paths, io::OpenMode mode,
                                              Reporter& reporter);
  /// Builds a set from already opened devices (tests, fuzzing).
  [[nodiscard]] static Result<DeviceSet> from_devices(std::vector<std::unique_ptr<io::BlockDevice>> devs,
                                                      Reporter& reporter);

  /// The superblock with the highest generation among the devices.
  [[nodiscard]] const format::SuperBlock& super() const { return devices_.at(latest_devid_).super; }
  [[nodiscard]] const Device* find(u64 devid) const {
    auto it = devices_.find(devid);
    return it == devices_.end() ? nullptr : &it->second;
  }
  [[nodiscard]] const std::map<u64, Device>& devices() const { return devices_; }
  /// The superblock copies found at open that do not hold the filesystem's
  /// newest generation: damaged copies, stale copies (a crash inside a
  /// commit's superblock writes leaves the later copies, or other devices,
  /// one generation behind; the kernel rewrites every copy at its next
  /// commit), and every copy of a device whose newest copy lags. One line
  /// each, naming the device, the copy's bytenr and its generation; empty
  /// when every fitting copy is current.
  [[nodiscard]] std::vector<std::string> lagging_supers() const;

 private:
  std::map<u64, Device> devices_;
  u64 latest_devid_ = 0;
};

}  // namespace fsctl::volumes
