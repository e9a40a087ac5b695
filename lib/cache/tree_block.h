// SPDX-License-Identifier: GPL-2.0-only
// TreeBlock: one verified tree block in memory (kernel: struct extent_buffer).
#pragma once
#include <memory>
#include <vector>

#include "lib/base/ints.h"
#include "lib/format/node_layout.h"

namespace fsctl::cache {

/// The nodesize bytes of the tree block at logical `bytenr`. Immutable once
/// handed out by a reader; `dirty` is for the write side (a later issue).
struct TreeBlock {
  u64 bytenr = 0;          // logical address
  std::vector<u8> data;    // nodesize bytes
  bool dirty = false;

  [[nodiscard]] format::NodeView view() const { return format::NodeView(data); }
};
using TreeBlockRef = std::shared_ptr<const TreeBlock>;

}  // namespace fsctl::cache
