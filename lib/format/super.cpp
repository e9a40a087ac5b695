// SPDX-License-Identifier: GPL-2.0-only
// Superblock validation (the checks of kernel btrfs_validate_super that do not
// need other metadata) and uuid text.
#include "lib/format/super.h"

#include <cstdio>
#include <cstring>
#include <type_traits>

#include "lib/format/csum.h"

namespace fsctl::format {

std::span<const u8, FSID_SIZE> header_fsid(const SuperBlock& sb) {
  if (sb.incompat_flags.get() & INCOMPAT_METADATA_UUID) return std::span<const u8, FSID_SIZE>(sb.metadata_uuid, FSID_SIZE);
  return std::span<const u8, FSID_SIZE>(sb.fsid, FSID_SIZE);
}

std::span<u8, SUPER_INFO_SIZE> super_bytes(SuperBlock& sb) {
  static_assert(alignof(SuperBlock) == 1 && std::is_trivially_copyable_v<SuperBlock>);
  return std::span<u8, SUPER_INFO_SIZE>(reinterpret_cast<u8*>(&sb), SUPER_INFO_SIZE);
}

std::span<const u8, SUPER_INFO_SIZE> super_bytes(const SuperBlock& sb) {
  return std::span<const u8, SUPER_INFO_SIZE>(reinterpret_cast<const u8*>(&sb), SUPER_INFO_SIZE);
}

std::span<const u8> super_label(const SuperBlock& sb) {
  auto bytes = super_bytes(sb).subspan(offsetof(SuperBlock, label), LABEL_SIZE);
  std::size_t n = 0;
  while (n < LABEL_SIZE && bytes[n] != 0) ++n;
  return bytes.first(n);
}

std::string uuid_to_string(std::span<const u8> u) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return buf;
}

static bool is_pow2(u64 v) { return v && !(v & (v - 1)); }

Status validate_super(const SuperBlock& sb, u64 expected_bytenr) {
  if (sb.magic.get() != SUPER_MAGIC) return make_error(Errc::corrupt, "no btrfs magic (not a btrfs filesystem)");
  u16 ct = sb.csum_type.get();
  if (!csum_type_known(ct)) return make_error(Errc::unsupported, "unknown csum type " + std::to_string(ct));
  std::span<const u8> bytes = super_bytes(sb);
  CsumBytes want = compute_csum(ct, bytes.subspan(CSUM_SIZE_MAX));
  if (std::memcmp(want.data(), sb.csum, csum_size(ct)) != 0)
    return make_error(Errc::csum, "superblock checksum mismatch, has " + csum_to_hex(ct, sb.csum) + " expect " +
                                      csum_to_hex(ct, want));
  if (sb.bytenr.get() != expected_bytenr)
    return make_error(Errc::corrupt, "superblock bytenr mismatch, has " + std::to_string(sb.bytenr.get()) + " expect " +
                                         std::to_string(expected_bytenr));
  u32 ss = sb.sectorsize.get(), ns = sb.nodesize.get();
  if (!is_pow2(ss) || ss < 4096 || ss > 65536)
    return make_error(Errc::corrupt, "invalid sectorsize " + std::to_string(ss));
  if (!is_pow2(ns) || ns < ss || ns > 65536) return make_error(Errc::corrupt, "invalid nodesize " + std::to_string(ns));
  if (sb.root_level >= MAX_LEVEL || sb.chunk_root_level >= MAX_LEVEL || sb.log_root_level >= MAX_LEVEL)
    return make_error(Errc::corrupt, "invalid root level (root " + std::to_string(sb.root_level) + ", chunk " +
                                         std::to_string(sb.chunk_root_level) + ")");
  if (sb.sys_chunk_array_size.get() > SYSTEM_CHUNK_ARRAY_SIZE)
    return make_error(Errc::corrupt, "sys_chunk_array_size " + std::to_string(sb.sys_chunk_array_size.get()) +
                                         " exceeds " + std::to_string(SYSTEM_CHUNK_ARRAY_SIZE));
  if (sb.root.get() % ss || sb.chunk_root.get() % ss)
    return make_error(Errc::corrupt, "root or chunk_root bytenr not aligned to sectorsize");
  if (sb.num_devices.get() == 0) return make_error(Errc::corrupt, "num_devices is 0");
  if (std::memcmp(sb.dev_item.fsid, header_fsid(sb).data(), FSID_SIZE) != 0)
    return make_error(Errc::corrupt, "dev_item fsid does not match the superblock's metadata fsid");
  return {};
}

}  // namespace fsctl::format
