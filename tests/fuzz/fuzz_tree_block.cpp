// SPDX-License-Identifier: GPL-2.0-only
// libFuzzer target: bytes → one tree block. Input byte 0 picks nodesize
// (4 KiB .. 64 KiB) and byte 1 the checksum type; the rest is the block
// (zero-padded or cut to nodesize). The layout check runs on the raw bytes,
// then the full verify_tree_block with the checksum fixed and the block's
// own identity; a block that passes has every item decoded by the format
// decoders and rendered by dump-tree's item_to_json. Nothing may crash.
#include <cstring>
#include <vector>

#include "cmd/item_json.h"
#include "lib/ctree/tree_checker.h"
#include "lib/format/csum.h"
#include "lib/format/decode.h"

using namespace fsctl;
using namespace fsctl::format;

extern "C" int LLVMFuzzerTestOneInput(const u8* data, std::size_t size) {
  if (size < 2) return 0;
  u32 ns = 4096u << (data[0] % 5);
  u16 ct = static_cast<u16>(data[1] % 4);
  std::vector<u8> block(ns, 0);
  std::memcpy(block.data(), data + 2, std::min<std::size_t>(size - 2, ns));
  if (!ctree::check_node_layout(block, ns)) return 0;

  CsumBytes c = compute_csum(ct, std::span<const u8>(block).subspan(CSUM_SIZE_MAX));
  std::memcpy(block.data(), c.data(), c.size());
  NodeView v(block);
  ctree::BlockIdentity id;
  id.nodesize = ns;
  id.csum_type = ct;
  std::memcpy(id.fsid.data(), v.header().fsid, FSID_SIZE);
  std::memcpy(id.chunk_tree_uuid.data(), v.header().chunk_tree_uuid, UUID_SIZE);
  ctree::ParentCheck check;
  check.level = v.level();
  check.transid = v.generation();
  if (v.nritems()) check.first_key = v.key(0);
  if (!ctree::verify_tree_block(block, v.bytenr(), id, check)) __builtin_trap();  // passed layout, so must pass

  for (u32 i = 0; i < v.nritems(); ++i) {
    if (!v.is_leaf()) {
      (void)v.node_key(i);
      (void)v.blockptr(i);
      (void)v.ptr_generation(i);
      continue;
    }
    Key k = v.item_key(i);
    auto d = v.item_data(i);
    (void)decode_extent_item(k, d);
    (void)decode_root_item(d);
    (void)decode_chunk(k.offset, d);
    auto j = cmd::item_to_json(k, d, ct);
    (void)cmd::json_to_text_fields(j);
    (void)j.dump();
  }
  return 0;
}
