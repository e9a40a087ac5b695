// SPDX-License-Identifier: GPL-2.0-only
// Key text for messages.
#include "lib/format/key.h"

#include <cstdio>

namespace fsctl::format {
std::string key_to_string(const Key& k) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%llu %u %llu)", static_cast<unsigned long long>(k.objectid), k.type,
                static_cast<unsigned long long>(k.offset));
  return buf;
}
}  // namespace fsctl::format
