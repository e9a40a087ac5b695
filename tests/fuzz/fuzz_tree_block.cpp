// SPDX-License-Identifier: GPL-2.0-only
// libFuzzer target: bytes → one tree block. Input byte 0 picks nodesize
// (4 KiB .. 64 KiB) and byte 1 the checksum type; the rest is the block
// (zero-padded or cut to nodesize). The layout check runs on the raw bytes,
// then the full verify_tree_block with the checksum fixed and the block's
// own identity; a block that passes has every item decoded by the typed
// codec of its key type (lib/format/codecs.h) and rendered by dump-tree's
// item_to_json. Nothing may crash, and what a codec accepts must survive its
// way back: encode(decode(x)) == x where the item has one encoding, and
// store(x, decode(x)) leaves x unchanged where callers edit items in place.
#include <algorithm>
#include <cstring>
#include <vector>

#include "cmd/item_json.h"
#include "lib/ctree/tree_checker.h"
#include "lib/format/codecs.h"
#include "lib/format/csum.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// store(copy, decode(copy)) must leave the item's bytes as they were.
template <typename Decode, typename Store>
void store_keeps(std::span<const u8> d, Decode decode, Store store) {
  auto r = decode(d);
  if (!r) return;
  std::vector<u8> copy(d.begin(), d.end());
  check(static_cast<bool>(store(std::span<u8>(copy), *r)));
  check(std::equal(copy.begin(), copy.end(), d.begin()));
}

// The codec of each key type over one item.
void decode_item(const Key& k, std::span<const u8> d) {
  switch (k.type) {
    case KeyType::INODE_ITEM: {
      // The reserved fields are not carried: the record survives, not the bytes.
      if (auto r = decode_inode_item(d)) {
        auto back = decode_inode_item(encode_inode_item(*r));
        check(back && *back == *r);
      }
      break;
    }
    case KeyType::INODE_REF:
    case KeyType::INODE_EXTREF: {
      bool ext = k.type == KeyType::INODE_EXTREF;
      if (auto r = decode_inode_refs(d, ext)) {
        auto bytes = encode_inode_refs(*r, ext);
        check(std::equal(bytes.begin(), bytes.end(), d.begin(), d.end()));
      }
      break;
    }
    case KeyType::DIR_ITEM:
    case KeyType::DIR_INDEX:
    case KeyType::XATTR_ITEM:
      if (auto r = decode_dir_item(d)) {
        auto bytes = encode_dir_item(*r);
        check(std::equal(bytes.begin(), bytes.end(), d.begin(), d.end()));
      }
      break;
    case KeyType::EXTENT_DATA:
      if (auto r = decode_file_extent(d)) {
        auto bytes = encode_file_extent(*r);
        check(std::equal(bytes.begin(), bytes.end(), d.begin(), d.end()));
      }
      break;
    case KeyType::ROOT_ITEM:
      store_keeps(d, decode_root_item, store_root_item);
      break;
    case KeyType::ROOT_REF:
    case KeyType::ROOT_BACKREF:
      if (auto r = decode_root_ref(d)) {
        auto bytes = encode_root_ref(*r);
        check(bytes.size() <= d.size() && std::equal(bytes.begin(), bytes.end(), d.begin()));
      }
      break;
    case KeyType::EXTENT_ITEM:
    case KeyType::METADATA_ITEM:
      if (auto r = decode_extent_item(k, d)) {
        auto bytes = encode_extent_item(*r);
        check(std::equal(bytes.begin(), bytes.end(), d.begin(), d.end()));
        std::vector<u8> copy(d.begin(), d.end());
        check(static_cast<bool>(store_extent_item(copy, *r)) && std::equal(copy.begin(), copy.end(), d.begin()));
      }
      break;
    case KeyType::TREE_BLOCK_REF:
    case KeyType::SHARED_BLOCK_REF:
    case KeyType::EXTENT_DATA_REF:
    case KeyType::SHARED_DATA_REF:
      if (auto r = decode_keyed_backref(k, d)) {
        auto item = encode_keyed_backref(k.objectid, *r);
        check(std::equal(item.data.begin(), item.data.end(), d.begin(), d.end()));
        if (k.type != KeyType::EXTENT_DATA_REF) check(item.key == k);  // EXTENT_DATA_REF: the offset is a hash
      }
      break;
    case KeyType::BLOCK_GROUP_ITEM:
      store_keeps(d, decode_block_group_item, store_block_group_item);
      break;
    case KeyType::FREE_SPACE_INFO:
      store_keeps(d, decode_free_space_info, store_free_space_info);
      break;
    case KeyType::FREE_SPACE_BITMAP:
      (void)for_each_free_run(k, d, 4096, [](u64, u64) {});
      break;
    case KeyType::DEV_ITEM:
      store_keeps(d, decode_dev_item, store_dev_item);
      break;
    case KeyType::DEV_EXTENT:
      if (auto r = decode_dev_extent(d)) {
        auto bytes = encode_dev_extent(*r);
        check(bytes.size() <= d.size() && std::equal(bytes.begin(), bytes.end(), d.begin()));
      }
      break;
    case KeyType::CHUNK_ITEM:
      if (auto r = decode_chunk(k.offset, d)) {
        auto bytes = encode_chunk(*r);
        check(bytes.size() <= d.size() && std::equal(bytes.begin(), bytes.end(), d.begin()));
      }
      break;
    case KeyType::QGROUP_STATUS:
      store_keeps(d, decode_qgroup_status, store_qgroup_status);
      break;
    case KeyType::QGROUP_INFO:
      store_keeps(d, decode_qgroup_info, store_qgroup_info);
      break;
    case KeyType::QGROUP_LIMIT:
      if (auto r = decode_qgroup_limit(d)) {
        auto bytes = encode_qgroup_limit(*r);
        check(std::equal(bytes.begin(), bytes.end(), d.begin()));
      }
      break;
    case KeyType::QGROUP_RELATION:
      if (auto r = decode_qgroup_relation(k)) {
        auto keys = encode_qgroup_relation(*r);
        check(keys[0] == k || keys[1] == k);
      }
      break;
    case KeyType::EXTENT_CSUM:
      for (u32 cs : {4u, 8u, 32u}) {
        auto r = decode_csum_item(k, d, cs, 4096);
        if (!r) continue;
        check(r->sums.size() == d.size() && r->logical == k.offset && csum_item_key(*r) == k);
        if (r->logical > ~0ULL - 3 * 4096) continue;
        // The parts either side of the second sector hold every checksum but one.
        CsumItem head = csum_item_part(*r, r->logical, r->logical + 4096, 4096);
        CsumItem tail = csum_item_part(*r, r->logical + 8192, r->end(4096), 4096);
        CsumItem mid = csum_item_part(*r, r->logical + 4096, r->logical + 8192, 4096);
        check(head.sums.size() + mid.sums.size() + tail.sums.size() == r->sums.size());
      }
      break;
    case KeyType::UUID_SUBVOL:
    case KeyType::UUID_RECEIVED_SUBVOL:
      if (auto r = decode_uuid_item(d)) {
        auto bytes = encode_uuid_item(*r);
        check(std::equal(bytes.begin(), bytes.end(), d.begin(), d.end()));
      }
      break;
    default:
      break;
  }
}

}  // namespace

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
  std::memcpy(id.fsid.data(), v.fsid().data(), FSID_SIZE);
  std::memcpy(id.chunk_tree_uuid.data(), v.chunk_tree_uuid().data(), UUID_SIZE);
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
    decode_item(k, d);
    auto j = cmd::item_to_json(k, d, ct);
    (void)cmd::json_to_text_fields(j);
    (void)j.dump();
  }
  return 0;
}
