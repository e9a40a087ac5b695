// SPDX-License-Identifier: GPL-2.0-only
// Path: the blocks and slots from a root down to a leaf (kernel struct
// btrfs_path). Owns references to its blocks; releasing is automatic.
#pragma once
#include <array>

#include "lib/cache/tree_block.h"
#include "lib/ctree/block_source.h"
#include "lib/format/node_layout.h"

namespace fsctl::ctree {

struct Path {
  RootRef root;
  std::array<cache::TreeBlockRef, format::MAX_LEVEL> nodes{};  // nodes[0] = leaf
  std::array<u32, format::MAX_LEVEL> slots{};

  [[nodiscard]] const cache::TreeBlockRef& leaf() const { return nodes[0]; }
  [[nodiscard]] format::NodeView leaf_view() const { return nodes[0]->view(); }
  /// True when slots[0] points at an item (not past the end of the leaf).
  [[nodiscard]] bool at_item() const { return nodes[0] && slots[0] < nodes[0]->view().nritems(); }
  [[nodiscard]] format::Key key() const { return leaf_view().item_key(slots[0]); }
  [[nodiscard]] std::span<const u8> item_data() const { return leaf_view().item_data(slots[0]); }
  void release() { *this = Path{}; }
};

}  // namespace fsctl::ctree
