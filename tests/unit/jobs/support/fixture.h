// SPDX-License-Identifier: GPL-2.0-only
// Fixture images of the in-memory crash tests: tests/data/NAME.img.zst
// (made by tests/data/make-unit-images.sh) unpacked with libzstd into a
// sparse copy-on-write io::MemoryImage, and the open of such an image
// through the same seams the CLI uses (a device wrapper, a commit observer).
#pragma once
#include <memory>
#include <string>

#include "lib/fs/fs_info.h"
#include "lib/io/memory_device.h"

namespace fsctl::testing {

/// The fixture tests/data/`name`.img.zst, unpacked once per process and
/// cached; callers copy it (cheap) before writing. Errors: Errc::io (the
/// file is missing or unreadable), Errc::corrupt (not a zstd frame with its
/// content size, or a truncated one).
[[nodiscard]] Result<std::shared_ptr<const io::MemoryImage>> load_fixture(const std::string& name);

/// load_fixture(`name`), failing the current doctest case (REQUIRE) with
/// the error's message when it cannot be loaded.
[[nodiscard]] std::shared_ptr<const io::MemoryImage> fixture(const std::string& name);

/// Opens the filesystem on `image` (one device named "memory"): read-only
/// or for writing with block groups loaded, with `wrap` around the device
/// and `observer` (both optional) and a cache of `cache_bytes`. Errors:
/// those of fs::FsInfo::open_devices.
[[nodiscard]] Result<std::unique_ptr<fs::FsInfo>> open_memory_fs(std::shared_ptr<io::MemoryImage> image, bool write,
                                                                 io::DeviceWrapper wrap = {},
                                                                 fs::CommitObserver* observer = nullptr,
                                                                 u64 cache_bytes = 64ULL << 20);

/// A copy of `base` (the quota-4k fixture) with two qgroups' numbers made
/// wrong and committed: 0/256 referenced and exclusive + 1 MiB, 1/100
/// referenced + 4 KiB. What `qgroup verify --repair` has to fix.
[[nodiscard]] std::shared_ptr<io::MemoryImage> with_wrong_qgroups(const std::shared_ptr<const io::MemoryImage>& base);

/// A copy of `base` with the BALANCE_ITEM of a paused kernel balance of
/// metadata (flags METADATA, 448 bytes) committed into the root tree, as
/// `btrfs balance pause` leaves it. What `balance cancel` has to remove.
[[nodiscard]] std::shared_ptr<io::MemoryImage> with_balance_item(const std::shared_ptr<const io::MemoryImage>& base);

}  // namespace fsctl::testing
