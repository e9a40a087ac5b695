// SPDX-License-Identifier: GPL-2.0-only
// DirectDevice: a file or block device read and written with O_DIRECT through
// aligned bounce buffers; buffered fallback where O_DIRECT is refused.
#pragma once
#include <memory>
#include <string>

#include "lib/base/reporter.h"
#include "lib/io/block_device.h"

namespace fsctl::io {

/// How to open a device.
struct OpenMode {
  bool write = false;      // open O_RDWR (else O_RDONLY)
  bool exclusive = false;  // O_EXCL on block devices (refuses one in use)
  bool direct = true;      // try O_DIRECT first
};

/// Opens `path`. With mode.write the device must not be mounted (see
/// mount_check.h): Errc::busy names the mount point; and it is locked
/// (flock LOCK_EX) until closed, so a second writer gets Errc::busy. Errors: Errc::io with
/// errno (ENOENT, EACCES, EBUSY from O_EXCL), Errc::busy.
/// When the file system under `path` refuses O_DIRECT (e.g. tmpfs), the
/// device falls back to buffered I/O and says so once through `reporter`.
[[nodiscard]] Result<std::unique_ptr<BlockDevice>> open_device(const std::string& path, OpenMode mode,
                                                               Reporter& reporter);

}  // namespace fsctl::io
