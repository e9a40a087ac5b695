// SPDX-License-Identifier: GPL-2.0-only
// MemoryDevice: an in-memory BlockDevice for hermetic unit tests and fuzzing.
#pragma once
#include <memory>
#include <vector>

#include "lib/io/block_device.h"

namespace fsctl::io {

/// A device whose contents live in a byte vector. Reads past the end fail
/// with Errc::corrupt; writes past the end with Errc::invalid_argument.
std::unique_ptr<BlockDevice> make_memory_device(std::vector<u8> bytes, std::string name = "memory");

}  // namespace fsctl::io
