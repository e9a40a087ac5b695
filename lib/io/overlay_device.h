// SPDX-License-Identifier: GPL-2.0-only
// OverlayDevice: a device that reads through to another device and keeps
// every write in memory, never reaching the lower device (e2fsprogs'
// undo_io / a device-mapper snapshot in spirit). A rehearsal of a write job
// runs on overlays of the real devices: it commits for real, batch after
// batch, yet the disk stays untouched (DESIGN.md invariant 4, "reserve
// before you write": the real run then reserves what the rehearsal used).
#pragma once
#include <memory>
#include <mutex>

#include "lib/io/block_device.h"

namespace fsctl::io {

/// Memory shared by the overlays of one filesystem: writes past `limit`
/// bytes (in 4 KiB pages) fail with Errc::nospc and set `exceeded`, so that
/// a rehearsal larger than its memory budget stops instead of growing.
struct OverlayBudget {
  u64 limit = 0;
  u64 used = 0;
  bool exceeded = false;
  std::mutex lock;  // the filesystem writes tree blocks from several threads
};

/// An overlay of `lower`, which must outlive it and is never written. Reads
/// return the lower device's bytes with the overlay's writes on top; flush
/// does nothing. Safe to use from several threads. Errors: those of the
/// lower device's reads; Errc::nospc when
/// a write would pass `budget`'s limit; Errc::invalid_argument for a write
/// past the end of the device.
[[nodiscard]] std::unique_ptr<BlockDevice> make_overlay_device(BlockDevice& lower, std::shared_ptr<OverlayBudget> budget);

}  // namespace fsctl::io
