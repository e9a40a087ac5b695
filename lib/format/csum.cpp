// SPDX-License-Identifier: GPL-2.0-only
// Checksums over ISA-L (crc32c), libxxhash (xxh64) and libsodium (sha256,
// blake2b via crypto_generichash with a 32-byte output).
#include "lib/format/csum.h"

#include <isa-l/crc.h>
#include <sodium.h>
#include <xxhash.h>

#include <cstdio>
#include <mutex>

#include "lib/base/assert.h"
#include "lib/format/le.h"

namespace fsctl::format {

bool csum_type_known(u16 t) { return t <= CSUM_TYPE_BLAKE2; }

std::size_t csum_size(u16 t) {
  static constexpr std::size_t sizes[] = {4, 8, 32, 32};
  FSCTL_ASSERT(csum_type_known(t));
  return sizes[t];
}

std::string csum_type_name(u16 t) {
  switch (t) {
    case CSUM_TYPE_CRC32: return "crc32c";
    case CSUM_TYPE_XXHASH: return "xxhash64";
    case CSUM_TYPE_SHA256: return "sha256";
    case CSUM_TYPE_BLAKE2: return "blake2b";
    default: return "unknown";
  }
}

u32 crc32c_raw(u32 seed, std::span<const u8> data) {
  // ISA-L's crc32_iscsi is the reflected Castagnoli CRC with neither the
  // initial nor the final inversion applied by the library.
  u32 crc = seed;
  std::size_t done = 0;
  while (done < data.size()) {
    std::size_t n = std::min<std::size_t>(data.size() - done, 1u << 30);
    crc = crc32_iscsi(const_cast<unsigned char*>(data.data() + done), static_cast<int>(n), crc);
    done += n;
  }
  return crc;
}

CsumBytes compute_csum(u16 t, std::span<const u8> data) {
  CsumBytes out{};
  switch (t) {
    case CSUM_TYPE_CRC32:
      store_le<u32>(out.data(), ~crc32c_raw(~0u, data));
      break;
    case CSUM_TYPE_XXHASH:
      store_le<u64>(out.data(), XXH64(data.data(), data.size(), 0));
      break;
    case CSUM_TYPE_SHA256: {
      static std::once_flag once;
      std::call_once(once, [] { FSCTL_ASSERT(sodium_init() >= 0); });
      crypto_hash_sha256(out.data(), data.data(), data.size());
      break;
    }
    case CSUM_TYPE_BLAKE2: {
      static std::once_flag once;
      std::call_once(once, [] { FSCTL_ASSERT(sodium_init() >= 0); });
      crypto_generichash(out.data(), 32, data.data(), data.size(), nullptr, 0);
      break;
    }
    default:
      FSCTL_ASSERT(false && "unknown csum type");
  }
  return out;
}

std::string csum_to_hex(u16 t, std::span<const u8> csum) {
  std::size_t n = csum_type_known(t) ? csum_size(t) : csum.size();
  std::string s = "0x";
  char buf[3];
  for (std::size_t i = 0; i < n && i < csum.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", csum[i]);
    s += buf;
  }
  return s;
}

}  // namespace fsctl::format
