// SPDX-License-Identifier: GPL-2.0-only
// put_item: test-only tool that plants items with the transaction engine, to
// make states the kernel makes only by chance (a paused kernel balance's
// BALANCE_ITEM, a leftover relocation tree's ROOT_ITEM, a subvolume whose
// deletion is in progress) for refusal tests. Not an fsctl command.
//
//   put_item IMG TREE OBJECTID TYPE OFFSET HEX
//       inserts key (OBJECTID TYPE OFFSET) with bytes HEX into tree TREE
//   put_item IMG copy TREE OBJECTID TYPE OFFSET  OBJECTID2 TYPE2 OFFSET2
//       inserts a copy of the item at the first key under the second key
//   put_item IMG set-u32 TREE OBJECTID TYPE OFFSET BYTE_OFFSET VALUE
//       overwrites a little-endian u32 inside an item (e.g. ROOT_ITEM refs)
// Numbers may be negative (-4 = BALANCE_OBJECTID as u64). Exit 0 on success.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cmd/env_hooks.h"
#include "lib/ctree/search.h"
#include "lib/ctree/write.h"
#include "lib/fs/fs_info.h"
#include "lib/transaction/transaction.h"

using namespace fsctl;
using namespace fsctl::format;

namespace {

u64 num(const char* s) { return s[0] == '-' ? static_cast<u64>(std::strtoll(s, nullptr, 0)) : std::strtoull(s, nullptr, 0); }

int die(const std::string& what, const std::string& message) {
  std::fprintf(stderr, "put_item: %s: %s\n", what.c_str(), message.c_str());
  return 1;
}
int die(const std::string& what, const Error& e) { return die(what, e.message); }

}  // namespace

static int run(int argc, char** argv, const cmd::EnvHooks& hooks) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: put_item IMG TREE OBJECTID TYPE OFFSET HEX | IMG copy ... | IMG set-u32 ...\n");
    return 2;
  }
  fs::OpenOptions o;
  o.write = true;
  hooks.apply(o);
  auto fs = fs::FsInfo::open({argv[1]}, o);
  if (!fs) return die("open", fs.error());
  auto t = transaction::Transaction::start(**fs);
  if (!t) return die("transaction", t.error());
  transaction::Reservation r;  // one item inserted or changed
  r.items_inserted = 1;
  if (auto res = (*t)->reserve(r); !res) return die("reserving", res.error());
  std::string cmd = argv[2];
  Status st;
  if (cmd == "copy" && argc == 10) {
    auto r = (*t)->root(num(argv[3]));
    if (!r) return die("tree", r.error());
    Key from{num(argv[4]), static_cast<u8>(num(argv[5])), num(argv[6])};
    Key to{num(argv[7]), static_cast<u8>(num(argv[8])), num(argv[9])};
    auto item = ctree::lookup_item(**t, (*r)->ref(), from);
    if (!item) return die("lookup", item.error());
    if (!*item) return die("lookup", "no such item");
    st = ctree::insert_item(**t, **r, to, **item);
  } else if (cmd == "set-u32" && argc == 9) {
    auto r = (*t)->root(num(argv[3]));
    if (!r) return die("tree", r.error());
    Key k{num(argv[4]), static_cast<u8>(num(argv[5])), num(argv[6])};
    ctree::Path p;
    auto found = ctree::search_slot_for_write(**t, **r, k, 0, p);
    if (!found) return die("search", found.error());
    if (!*found) return die("search", "no such item");
    auto d = ctree::item_data_mut(**t, p);
    u64 at = num(argv[7]);
    if (at + 4 > d.size()) return die("set-u32", "offset past the item");
    store_le<u32>(d.data() + at, static_cast<u32>(num(argv[8])));
  } else if (argc == 7) {
    auto r = (*t)->root(num(argv[2]));
    if (!r) return die("tree", r.error());
    Key k{num(argv[3]), static_cast<u8>(num(argv[4])), num(argv[5])};
    std::string hex = argv[6];
    std::vector<u8> data;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) data.push_back(static_cast<u8>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    st = ctree::insert_item(**t, **r, k, data);
  } else {
    std::fprintf(stderr, "put_item: bad arguments\n");
    return 2;
  }
  if (!st) return die("change", st.error());
  if (auto c = (*t)->commit(); !c) return die("commit", c.error());
  return 0;
}

int main(int argc, char** argv) {
  // FSCTL_RESERVATION_LOG and FSCTL_FAIL_AFTER_WRITES (cmd/env_hooks.h).
  const cmd::EnvHooks hooks = cmd::EnvHooks::from_environment("put_item");
  int rc = run(argc, argv, hooks);
  return hooks.fail_point_reached() ? cmd::FAIL_POINT_EXIT : rc;
}
