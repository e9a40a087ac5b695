// SPDX-License-Identifier: GPL-2.0-only
// Tree block verification. Disk contents are untrusted: every violation is an
// error value, never an assert (STYLE.md "Errors").
#include "lib/ctree/tree_checker.h"

#include <cstring>

#include "lib/format/csum.h"
#include "lib/format/super.h"

namespace fsctl::ctree {
using namespace fsctl::format;

Status check_node_layout(std::span<const u8> block, u32 nodesize) {
  if (block.size() != nodesize) return make_error(Errc::corrupt, "block is " + std::to_string(block.size()) + " bytes, expect nodesize " + std::to_string(nodesize));
  NodeView v(block);
  u32 n = v.nritems();
  u32 data_size = leaf_data_size(nodesize);
  if (v.level() >= MAX_LEVEL) return make_error(Errc::corrupt, "invalid level " + std::to_string(v.level()));
  if (v.is_leaf()) {
    if (static_cast<u64>(n) * sizeof(Item) > data_size)
      return make_error(Errc::corrupt, "leaf nritems " + std::to_string(n) + " does not fit the block");
    u32 prev_start = data_size;
    for (u32 i = 0; i < n; ++i) {
      u64 off = v.item_offset(i), sz = v.item_size(i);
      if (off + sz != prev_start)
        return make_error(Errc::corrupt, "leaf slot " + std::to_string(i) + " item data ends at " + std::to_string(off + sz) +
                                             ", expect " + std::to_string(prev_start) + " (items not packed)");
      if (off < static_cast<u64>(n) * sizeof(Item))
        return make_error(Errc::corrupt, "leaf slot " + std::to_string(i) + " item data at " + std::to_string(off) +
                                             " overlaps the item headers");
      prev_start = static_cast<u32>(off);
      if (i > 0 && !(v.item_key(i - 1) < v.item_key(i)))
        return make_error(Errc::corrupt, "leaf keys out of order at slot " + std::to_string(i) + ": " +
                                             key_to_string(v.item_key(i - 1)) + " >= " + key_to_string(v.item_key(i)));
    }
  } else {
    if (n == 0) return make_error(Errc::corrupt, "node with 0 key pointers");
    if (n > node_max_ptrs(nodesize))
      return make_error(Errc::corrupt, "node nritems " + std::to_string(n) + " exceeds " + std::to_string(node_max_ptrs(nodesize)));
    for (u32 i = 0; i < n; ++i) {
      if (v.blockptr(i) == 0) return make_error(Errc::corrupt, "node slot " + std::to_string(i) + " has blockptr 0");
      if (i > 0 && !(v.node_key(i - 1) < v.node_key(i)))
        return make_error(Errc::corrupt, "node keys out of order at slot " + std::to_string(i) + ": " +
                                             key_to_string(v.node_key(i - 1)) + " >= " + key_to_string(v.node_key(i)));
    }
  }
  return {};
}

Status check_parent(const NodeView& v, const ParentCheck& check) {
  if (check.level >= 0 && v.level() != check.level)
    return make_error(Errc::corrupt, "level mismatch, has " + std::to_string(v.level()) + " expect " + std::to_string(check.level));
  if (check.transid && v.generation() != check.transid)
    return make_error(Errc::corrupt, "parent transid verify failed, has " + std::to_string(v.generation()) + " expect " +
                                         std::to_string(check.transid));
  if (check.owner && v.owner() != *check.owner)
    return make_error(Errc::corrupt, "owner mismatch, has " + std::to_string(v.owner()) + " expect " + std::to_string(*check.owner));
  if (check.first_key) {
    if (v.nritems() == 0)
      return make_error(Errc::corrupt, "empty block where the parent expects first key " + key_to_string(*check.first_key));
    if (v.key(0) != *check.first_key)
      return make_error(Errc::corrupt, "first key mismatch, has " + key_to_string(v.key(0)) + " expect " +
                                           key_to_string(*check.first_key));
  }
  return {};
}

Status verify_tree_block(std::span<const u8> block, u64 bytenr, const BlockIdentity& id, const ParentCheck& check) {
  if (block.size() != id.nodesize) return make_error(Errc::corrupt, "short block");
  CsumBytes want = compute_csum(id.csum_type, block.subspan(CSUM_SIZE_MAX));
  if (std::memcmp(want.data(), block.data(), csum_size(id.csum_type)) != 0)
    return make_error(Errc::csum, "csum mismatch, has " + csum_to_hex(id.csum_type, block.subspan(0, CSUM_SIZE_MAX)) +
                                      " expect " + csum_to_hex(id.csum_type, want));
  NodeView v(block);
  if (v.bytenr() != bytenr)
    return make_error(Errc::corrupt, "header bytenr mismatch, has " + std::to_string(v.bytenr()) + " expect " + std::to_string(bytenr));
  if (std::memcmp(v.fsid().data(), id.fsid.data(), FSID_SIZE) != 0)
    return make_error(Errc::corrupt, "fsid mismatch, has " + uuid_to_string(v.fsid()) + " expect " + uuid_to_string(id.fsid));
  if (id.check_chunk_tree_uuid && std::memcmp(v.chunk_tree_uuid().data(), id.chunk_tree_uuid.data(), UUID_SIZE) != 0)
    return make_error(Errc::corrupt, "chunk tree uuid mismatch, has " + uuid_to_string(v.chunk_tree_uuid()) +
                                         " expect " + uuid_to_string(id.chunk_tree_uuid));
  FSCTL_TRY(check_node_layout(block, id.nodesize));
  return check_parent(v, check);
}

}  // namespace fsctl::ctree
