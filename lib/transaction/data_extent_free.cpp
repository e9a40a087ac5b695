// SPDX-License-Identifier: GPL-2.0-only
// Freeing data extents (data_extent_free.h).
#include "lib/transaction/data_extent_free.h"

#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/format/csum.h"
#include "lib/format/csum_item.h"
#include "lib/transaction/transaction.h"

namespace fsctl::transaction {
using namespace fsctl::format;

Status delete_csum_range(Transaction& t, u64 bytenr, u64 len) {
  if (!t.fs().find_root(CSUM_TREE_OBJECTID)) return {};
  FSCTL_TRY_ASSIGN(auto* csum, t.root(CSUM_TREE_OBJECTID));
  const u32 ss = t.fs().sectorsize();
  const u32 cs = static_cast<u32>(csum_size(t.fs().csum_type()));
  const u64 end = bytenr + len;
  // Items never overlap and are sorted by logical start: the last one
  // starting before `end` is the only candidate each round; each round
  // removes one overlapping item (putting back its parts outside the range),
  // so the next round's candidate starts earlier or ends at `bytenr`.
  for (;;) {
    ctree::Path p;
    FSCTL_TRY_ASSIGN(bool exact, ctree::search_slot(t, csum->ref(), Key{EXTENT_CSUM_OBJECTID, KeyType::EXTENT_CSUM, end - 1}, p));
    if (!exact) {
      FSCTL_TRY_ASSIGN(bool has, ctree::prev_item(t, p));
      if (!has) return {};
    }
    Key k = p.key();
    if (k.objectid != EXTENT_CSUM_OBJECTID || k.type != KeyType::EXTENT_CSUM) return {};
    FSCTL_TRY_ASSIGN(CsumItem item, decode_csum_item(k, p.item_data(), cs, ss));
    if (item.end(ss) <= bytenr) return {};
    CsumItem head = csum_item_part(item, item.logical, bytenr, ss);
    CsumItem tail = csum_item_part(item, end, item.end(ss), ss);
    p.release();
    ctree::Path w;
    FSCTL_TRY_ASSIGN(bool found, ctree::search_slot_for_write(t, *csum, k, 0, w));
    if (!found) return make_error(Errc::corrupt, "csum item " + key_to_string(k) + " vanished");
    FSCTL_TRY(ctree::delete_item(t, *csum, w));
    if (!head.sums.empty()) FSCTL_TRY(ctree::insert_item(t, *csum, csum_item_key(head), head.sums));
    if (!tail.sums.empty()) FSCTL_TRY(ctree::insert_item(t, *csum, csum_item_key(tail), tail.sums));
    if (item.logical < bytenr) return {};  // the head ends at bytenr: nothing before it overlaps
  }
}

Status free_data_extent(Transaction& t, u64 bytenr, u64 len) {
  FSCTL_TRY(delete_csum_range(t, bytenr, len));
  return t.release_data_space(bytenr, len);
}

}  // namespace fsctl::transaction
