// SPDX-License-Identifier: GPL-2.0-only
// The Transaction's bookkeeping parts on their own (transaction.h): the
// allocator's placement policy, delayed refs, free space updates and block
// group usage, without a filesystem. Their tree-changing halves run in the
// image tests and the in-memory job tests.
#include <doctest/doctest.h>

#include "lib/format/items.h"
#include "lib/transaction/block_group_usage.h"
#include "lib/transaction/delayed_refs.h"
#include "lib/transaction/free_space_updates.h"
#include "lib/transaction/space_allocator.h"

using namespace fsctl;
using namespace fsctl::transaction;

namespace {
constexpr u32 NS = 16384;

BlockGroupSpace group(u64 start, u64 length, u64 flags = format::BLOCK_GROUP_METADATA) {
  BlockGroupSpace g;
  g.start = start;
  g.length = length;
  g.flags = flags;
  g.free[start] = length;
  return g;
}
}  // namespace

TEST_CASE("allocator: blocks come contiguously from where the last one ended") {
  SpaceAllocator a;
  a.add_group(group(30 * MiB, 256 * MiB));
  u64 first = *a.find(NS, false, NS);
  CHECK(first == 30 * MiB);
  CHECK(*a.find(NS, false, NS) == first + NS);
  CHECK(*a.find(NS, false, NS) == first + 2 * NS);
}

TEST_CASE("allocator: a block freed again is reused first, most recent first") {
  SpaceAllocator a;
  a.add_group(group(30 * MiB, 256 * MiB));
  u64 b0 = *a.find(NS, false, NS), b1 = *a.find(NS, false, NS), b2 = *a.find(NS, false, NS);
  a.give_back(b0, NS);
  a.give_back(b1, NS);
  CHECK(*a.find(NS, false, NS) == b1);
  CHECK(*a.find(NS, false, NS) == b0);
  CHECK(*a.find(NS, false, NS) == b2 + NS);
}

TEST_CASE("allocator: excluded groups and pinned blocks are never used; system groups only for system") {
  SpaceAllocator a;
  a.add_group(group(30 * MiB, 8 * MiB));
  a.add_group(group(100 * MiB, 8 * MiB));
  a.add_group(group(200 * MiB, 8 * MiB, format::BLOCK_GROUP_SYSTEM));
  a.exclude({30 * MiB});
  u64 b = *a.find(NS, false, NS);
  CHECK(b >= 100 * MiB);
  CHECK(b < 108 * MiB);
  CHECK(*a.find(NS, true, NS) == 200 * MiB);
  // A pinned block is never handed out, even if a free range starts there
  // (freed committed blocks never enter the free map; this is the guard).
  SpaceAllocator p;
  p.add_group(group(0, 4 * NS));
  p.pin(0);
  auto got = p.find(NS, false, NS);
  CHECK((!got || *got != 0));
}

TEST_CASE("allocator: a full group gives nothing; free bytes count whole blocks of non-excluded groups") {
  SpaceAllocator a;
  a.add_group(group(0, 2 * NS));
  CHECK(a.find(NS, false, NS));
  CHECK(a.find(NS, false, NS));
  CHECK(!a.find(NS, false, NS));
  CHECK(!a.find(NS, true, NS));
  CHECK(a.free_metadata_bytes(NS) == 0);
  a.add_group(group(10 * MiB, 3 * NS + 100));
  CHECK(a.free_metadata_bytes(NS) == 3 * NS);
  a.exclude({10 * MiB});
  CHECK(a.free_metadata_bytes(NS) == 0);
  CHECK(a.group_of(10 * MiB + 5)->start == 10 * MiB);
  a.remove_group(10 * MiB);
  CHECK(a.group_of(10 * MiB + 5) == nullptr);
}

TEST_CASE("delayed refs: an add freed again cancels; one already applied becomes a drop") {
  DelayedRefs r;
  CHECK(r.empty());
  r.add(4096, {5, 0});
  CHECK(r.pending() == 1);
  r.forget_new(4096, {5, 0});
  CHECK(r.empty());
  r.forget_new(8192, {5, 1});  // its add was applied by an earlier round
  CHECK(r.pending() == 1);
  r.drop(12288, {2, 0});
  CHECK(r.pending() == 2);
}

TEST_CASE("free space updates: reuse of a freed block cancels its free, freeing again queues it anew") {
  FreeSpaceUpdates f;
  CHECK(f.empty());
  f.allocated(4096);
  CHECK(!f.empty());
  f.freed_new(4096);  // never applied: forgotten
  CHECK(f.empty());
  f.freed_committed(8192);
  f.allocated(8192);  // the tree still says used: nothing to do
  CHECK(f.empty());
  f.freed_new(8192);  // ... and freeing it again must queue the free (test 094)
  CHECK(!f.empty());
}

TEST_CASE("block group usage: deltas and touched groups") {
  BlockGroupUsage u;
  CHECK(u.empty());
  CHECK(!u.touched(1 * MiB));
  u.allocated(1 * MiB, NS);
  u.freed(1 * MiB, NS);
  CHECK(u.touched(1 * MiB));
  u.freed(2 * MiB, NS);
  CHECK(u.touched(2 * MiB));
  CHECK(!u.empty());
}
