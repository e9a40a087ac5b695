// SPDX-License-Identifier: GPL-2.0-only
// Compatibility header: encode_extent_item, sort_inline_refs and
// inline_ref_seq are in extent_item.h (the list of codecs: codecs.h). Kept
// until the transaction split lands (issue 11); new code includes
// extent_item.h.
#pragma once
#include "lib/format/decode.h"
#include "lib/format/extent_item.h"
