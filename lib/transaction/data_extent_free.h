// SPDX-License-Identifier: GPL-2.0-only
// Freeing a data extent whose last reference went (kernel extent-tree.c
// __btrfs_free_extent for data: btrfs_del_csums, then
// do_free_extent_accounting): its checksums leave the csum tree, its space
// becomes free. The extent item itself is the caller's (extent_ref_edit.h).
#pragma once
#include "lib/base/ints.h"
#include "lib/base/result.h"

namespace fsctl::transaction {

class Transaction;

/// Deletes the checksums of [bytenr, bytenr + len) from the csum tree of
/// `t`: items inside the range go, an item reaching into it from either
/// side is cut, one covering it on both sides is split in two (kernel
/// file-item.c btrfs_del_csums). A range without checksums (nodatasum)
/// changes nothing. Errors: Errc::corrupt for a csum item that does not
/// decode (naming its key); tree errors.
[[nodiscard]] Status delete_csum_range(Transaction& t, u64 bytenr, u64 len);

/// Frees the committed data extent [bytenr, bytenr + len): delete_csum_range,
/// then Transaction::release_data_space. Errors: those two.
[[nodiscard]] Status free_data_extent(Transaction& t, u64 bytenr, u64 len);

}  // namespace fsctl::transaction
