// SPDX-License-Identifier: GPL-2.0-only
// Is a device (or an image file behind a loop device) mounted? Reads
// /proc/self/mountinfo and /sys/block/loop*/loop/backing_file.
#pragma once
#include <optional>
#include <string>

#include "lib/base/result.h"

namespace fsctl::io {

/// Returns the mount point when `path` is mounted: a block device matched by
/// its device number, or a regular file that backs a mounted loop device.
/// std::nullopt when not mounted. Errors: Errc::io when `path` cannot be
/// stat'ed.
[[nodiscard]] Result<std::optional<std::string>> find_mount(const std::string& path);

/// True when the kernel has a mounted btrfs with this fsid (the directory
/// /sys/fs/btrfs/<fsid> exists only while mounted). `fsid_text` is the
/// canonical lower-case uuid string.
[[nodiscard]] bool fsid_is_mounted(const std::string& fsid_text);

}  // namespace fsctl::io
