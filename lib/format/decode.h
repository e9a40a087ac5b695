// SPDX-License-Identifier: GPL-2.0-only
// Compatibility header: the decoders that lived here are now one file per
// item (chunk_item.h, extent_item.h, root_item.h; the list: codecs.h). Kept
// for lib/transaction until the transaction split lands (issue 11); new code
// includes the item's own header.
#pragma once
#include "lib/format/chunk_item.h"
#include "lib/format/extent_item.h"
#include "lib/format/items.h"
#include "lib/format/root_item.h"
