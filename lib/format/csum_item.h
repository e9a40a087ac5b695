// SPDX-License-Identifier: GPL-2.0-only
// EXTENT_CSUM item codec (kernel btrfs_tree.h struct btrfs_csum_item): the
// checksums of consecutive data sectors, the first at logical key.offset,
// in the csum tree under (EXTENT_CSUM_OBJECTID, EXTENT_CSUM, logical). Each
// checksum is csum_size(super.csum_type) bytes (csum.h); the item holds a
// whole number of them (tree-checker.c check_csum_item).
#pragma once
#include <span>
#include <vector>

#include "lib/base/ints.h"
#include "lib/base/result.h"
#include "lib/format/key.h"

namespace fsctl::format {

/// A csum item in cpu form: the sectors [logical, logical + sectors *
/// sectorsize) and their checksums, `csum_size` bytes each, in order.
struct CsumItem {
  u64 logical = 0;
  u32 csum_size = 0;
  std::vector<u8> sums;
  [[nodiscard]] u64 sectors() const { return csum_size ? sums.size() / csum_size : 0; }
  /// Logical end (exclusive) for sectors of `sectorsize` bytes.
  [[nodiscard]] u64 end(u32 sectorsize) const { return logical + sectors() * sectorsize; }
};

/// Decodes the csum item `key` with body `data` for sectors of `sectorsize`
/// bytes. Errors: Errc::corrupt when the key is no (EXTENT_CSUM_OBJECTID,
/// EXTENT_CSUM, _) key, the body is empty or not a whole number of
/// `csum_size`-byte checksums ("csum item of N bytes, expect a multiple of
/// S"), or the sectors it covers run past the end of the address space.
[[nodiscard]] Result<CsumItem> decode_csum_item(const Key& key, std::span<const u8> data, u32 csum_size, u32 sectorsize);

/// The part of `item` that covers [from, to) (clipped to the item), as an
/// item of its own: its key offset is the first covered sector. REQUIRES:
/// `from` and `to` sector-aligned.
[[nodiscard]] CsumItem csum_item_part(const CsumItem& item, u64 from, u64 to, u32 sectorsize);

/// The key and body of `item`: (EXTENT_CSUM_OBJECTID, EXTENT_CSUM,
/// item.logical) and the checksums.
[[nodiscard]] Key csum_item_key(const CsumItem& item);

}  // namespace fsctl::format
