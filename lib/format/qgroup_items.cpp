// SPDX-License-Identifier: GPL-2.0-only
// Quota tree item codecs (kernel btrfs_tree.h struct btrfs_qgroup_status_item,
// btrfs_qgroup_info_item, btrfs_qgroup_limit_item; qgroup.c
// add_qgroup_relation_item for the two relation keys).
#include "lib/format/qgroup_items.h"

#include <algorithm>

#include "lib/format/item_bytes.h"
#include "lib/format/items.h"

namespace fsctl::format {

namespace {

// The 32-byte form ends before enable_gen (SIMPLE_QUOTA added it).
constexpr std::size_t QGROUP_STATUS_V1_SIZE = offsetof(QgroupStatusItem, enable_gen);
static_assert(QGROUP_STATUS_V1_SIZE == 32);

QgroupStatusItem status_to_disk(const QgroupStatusRecord& s) {
  QgroupStatusItem d{};
  d.version.set(s.version);
  d.generation.set(s.generation);
  d.flags.set(s.flags);
  d.rescan.set(s.rescan);
  d.enable_gen.set(s.enable_gen);
  return d;
}

QgroupInfoItem info_to_disk(const QgroupInfoRecord& i) {
  QgroupInfoItem d{};
  d.generation.set(i.generation);
  d.rfer.set(i.rfer);
  d.rfer_cmpr.set(i.rfer_cmpr);
  d.excl.set(i.excl);
  d.excl_cmpr.set(i.excl_cmpr);
  return d;
}

}  // namespace

std::string qgroupid_to_string(u64 qgroupid) {
  return std::to_string(qgroupid_level(qgroupid)) + "/" + std::to_string(qgroupid_id(qgroupid));
}

Result<QgroupStatusRecord> decode_qgroup_status(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_at_least(data, QGROUP_STATUS_V1_SIZE, "qgroup status item"));
  QgroupStatusItem d{};
  std::memcpy(&d, data.data(), std::min(data.size(), sizeof d));
  QgroupStatusRecord s;
  s.version = d.version.get();
  s.generation = d.generation.get();
  s.flags = d.flags.get();
  s.rescan = d.rescan.get();
  s.has_enable_gen = data.size() >= sizeof d;
  s.enable_gen = s.has_enable_gen ? d.enable_gen.get() : 0;
  return s;
}

std::vector<u8> encode_qgroup_status(const QgroupStatusRecord& s) {
  std::vector<u8> out = detail::struct_bytes(status_to_disk(s));
  if (!s.has_enable_gen) out.resize(QGROUP_STATUS_V1_SIZE);
  return out;
}

Status store_qgroup_status(std::span<u8> data, const QgroupStatusRecord& s) {
  FSCTL_TRY(detail::check_size_at_least(data, QGROUP_STATUS_V1_SIZE, "qgroup status item"));
  // The fields the item has room for: enable_gen only in the 40-byte form
  // (an odd size between keeps its tail bytes as they are).
  QgroupStatusItem d = status_to_disk(s);
  std::memcpy(data.data(), &d, data.size() >= sizeof d ? sizeof d : QGROUP_STATUS_V1_SIZE);
  return {};
}

Result<QgroupInfoRecord> decode_qgroup_info(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(QgroupInfoItem), "qgroup info item"));
  auto d = detail::load_struct<QgroupInfoItem>(data);
  return QgroupInfoRecord{d.generation.get(), d.rfer.get(), d.rfer_cmpr.get(), d.excl.get(), d.excl_cmpr.get()};
}

std::vector<u8> encode_qgroup_info(const QgroupInfoRecord& i) { return detail::struct_bytes(info_to_disk(i)); }

Status store_qgroup_info(std::span<u8> data, const QgroupInfoRecord& i) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(QgroupInfoItem), "qgroup info item"));
  detail::store_struct(data, info_to_disk(i));
  return {};
}

Result<QgroupLimitRecord> decode_qgroup_limit(std::span<const u8> data) {
  FSCTL_TRY(detail::check_size_at_least(data, sizeof(QgroupLimitItem), "qgroup limit item"));
  auto d = detail::load_struct<QgroupLimitItem>(data);
  return QgroupLimitRecord{d.flags.get(), d.max_rfer.get(), d.max_excl.get(), d.rsv_rfer.get(), d.rsv_excl.get()};
}

std::vector<u8> encode_qgroup_limit(const QgroupLimitRecord& l) {
  QgroupLimitItem d{};
  d.flags.set(l.flags);
  d.max_rfer.set(l.max_rfer);
  d.max_excl.set(l.max_excl);
  d.rsv_rfer.set(l.rsv_rfer);
  d.rsv_excl.set(l.rsv_excl);
  return detail::struct_bytes(d);
}

Result<QgroupRelation> decode_qgroup_relation(const Key& key) {
  u64 a = key.objectid, b = key.offset;
  if (qgroupid_level(a) == qgroupid_level(b))
    return make_error(Errc::corrupt, "relation between " + qgroupid_to_string(a) + " and " + qgroupid_to_string(b) +
                                         " of the same level");
  u64 member = qgroupid_level(a) < qgroupid_level(b) ? a : b;
  return QgroupRelation{member, member == a ? b : a};
}

std::array<Key, 2> encode_qgroup_relation(const QgroupRelation& r) {
  return {Key{r.member, KeyType::QGROUP_RELATION, r.parent}, Key{r.parent, KeyType::QGROUP_RELATION, r.member}};
}

}  // namespace fsctl::format
