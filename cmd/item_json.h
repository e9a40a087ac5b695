// SPDX-License-Identifier: GPL-2.0-only
// Item rendering for `inspect dump-tree`: decode an item into JSON fields
// named like the kernel struct members, and a one-line text form from that.
#pragma once
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "lib/format/key.h"

namespace fsctl::cmd {

/// Decoded fields of the item with `key` and `data`. Never throws on bad
/// bytes: a malformed item yields {"error": "...", "hex": "..."}; an item type
/// without a decoder yields {"hex": "..."}. `csum_type` sizes EXTENT_CSUM items.
[[nodiscard]] nlohmann::ordered_json item_to_json(const format::Key& key, std::span<const u8> data, u16 csum_type);

/// "name value name value ..." text from item_to_json's object (nested
/// objects and arrays inline).
[[nodiscard]] std::string json_to_text_fields(const nlohmann::ordered_json& j);

/// Names and labels as valid UTF-8 for JSON (nlohmann throws on anything
/// else): well-formed sequences are kept, every other byte becomes the four
/// characters \xNN. btrfs names are arbitrary bytes, not UTF-8.
[[nodiscard]] std::string utf8_text(std::span<const u8> bytes);

/// Key as JSON: {"objectid", "type", "type_name", "offset"}.
[[nodiscard]] nlohmann::ordered_json key_to_json(const format::Key& key);
/// Key as text "(objectid TYPE_NAME offset)", numbers in decimal.
[[nodiscard]] std::string key_text(const format::Key& key);

}  // namespace fsctl::cmd
