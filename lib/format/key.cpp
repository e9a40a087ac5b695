// SPDX-License-Identifier: GPL-2.0-only
// Key text for messages.
#include "lib/format/key.h"

namespace fsctl::format {
std::string key_to_string(const Key& k) {
  return "(" + std::to_string(k.objectid) + " " + std::to_string(k.type) + " " + std::to_string(k.offset) + ")";
}
}  // namespace fsctl::format
