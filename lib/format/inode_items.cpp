// SPDX-License-Identifier: GPL-2.0-only
// Inode item codecs (kernel btrfs_tree.h struct btrfs_inode_item,
// btrfs_inode_ref, btrfs_inode_extref).
#include "lib/format/inode_items.h"

#include "lib/format/cursor.h"
#include "lib/format/item_bytes.h"
#include "lib/format/items.h"

namespace fsctl::format {

namespace {
TimespecRecord ts(const Timespec& t) { return {t.sec.get(), t.nsec.get()}; }
void set_ts(Timespec& t, const TimespecRecord& r) {
  t.sec.set(r.sec);
  t.nsec.set(r.nsec);
}
void append(std::vector<u8>& out, const void* p, std::size_t n) {
  std::size_t at = out.size();
  out.resize(at + n);
  if (n) std::memcpy(out.data() + at, p, n);
}
}  // namespace

Result<InodeRecord> decode_inode_item(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(InodeItem), "inode item"));
  auto d = detail::load_struct<InodeItem>(data);
  InodeRecord i;
  i.generation = d.generation.get();
  i.transid = d.transid.get();
  i.size = d.size.get();
  i.nbytes = d.nbytes.get();
  i.block_group = d.block_group.get();
  i.nlink = d.nlink.get();
  i.uid = d.uid.get();
  i.gid = d.gid.get();
  i.mode = d.mode.get();
  i.rdev = d.rdev.get();
  i.flags = d.flags.get();
  i.sequence = d.sequence.get();
  i.atime = ts(d.atime);
  i.ctime = ts(d.ctime);
  i.mtime = ts(d.mtime);
  i.otime = ts(d.otime);
  return i;
}

std::vector<u8> encode_inode_item(const InodeRecord& i) {
  InodeItem d{};
  d.generation.set(i.generation);
  d.transid.set(i.transid);
  d.size.set(i.size);
  d.nbytes.set(i.nbytes);
  d.block_group.set(i.block_group);
  d.nlink.set(i.nlink);
  d.uid.set(i.uid);
  d.gid.set(i.gid);
  d.mode.set(i.mode);
  d.rdev.set(i.rdev);
  d.flags.set(i.flags);
  d.sequence.set(i.sequence);
  set_ts(d.atime, i.atime);
  set_ts(d.ctime, i.ctime);
  set_ts(d.mtime, i.mtime);
  set_ts(d.otime, i.otime);
  return detail::struct_bytes(d);
}

Result<std::vector<InodeRefEntry>> decode_inode_refs(std::span<const u8> data, bool extref) {
  Cursor c(data);
  std::vector<InodeRefEntry> out;
  while (c.remaining()) {
    InodeRefEntry e;
    u16 name_len = 0;
    if (extref) {
      FSCTL_TRY_ASSIGN(auto* r, c.take<InodeExtref>("inode extref"));
      e.parent_objectid = r->parent_objectid.get();
      e.index = r->index.get();
      name_len = r->name_len.get();
    } else {
      FSCTL_TRY_ASSIGN(auto* r, c.take<InodeRef>("inode ref"));
      e.index = r->index.get();
      name_len = r->name_len.get();
    }
    FSCTL_TRY_ASSIGN(e.name, c.bytes(name_len, extref ? "inode extref name" : "inode ref name"));
    out.push_back(e);
  }
  return out;
}

std::vector<u8> encode_inode_refs(const std::vector<InodeRefEntry>& entries, bool extref) {
  std::vector<u8> out;
  for (const auto& e : entries) {
    if (extref) {
      InodeExtref r{};
      r.parent_objectid.set(e.parent_objectid);
      r.index.set(e.index);
      r.name_len.set(static_cast<u16>(e.name.size()));
      append(out, &r, sizeof r);
    } else {
      InodeRef r{};
      r.index.set(e.index);
      r.name_len.set(static_cast<u16>(e.name.size()));
      append(out, &r, sizeof r);
    }
    append(out, e.name.data(), e.name.size());
  }
  return out;
}

}  // namespace fsctl::format
