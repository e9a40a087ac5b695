// SPDX-License-Identifier: GPL-2.0-only
// UUID_SUBVOL / UUID_RECEIVED_SUBVOL codec (kernel btrfs_tree.h; uuid tree 9:
// key (uuid low 8 bytes, type, uuid high 8 bytes), body a list of le64
// subvolume ids).
#pragma once
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::format {

/// The subvolume ids of a uuid tree item. Errors: Errc::corrupt when the
/// size is not a multiple of 8.
[[nodiscard]] Result<std::vector<u64>> decode_uuid_item(std::span<const u8> data);
/// The item bytes of `subvol_ids`.
[[nodiscard]] std::vector<u8> encode_uuid_item(const std::vector<u64>& subvol_ids);

}  // namespace fsctl::format
