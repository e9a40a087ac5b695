// SPDX-License-Identifier: GPL-2.0-only
// The typed item codecs of lib/format, one file per item (STYLE.md "On-disk
// structures"): each has a plain cpu struct, decode_*(span) -> Result<T>
// (bounds-checked: a short or inconsistent item is Errc::corrupt with a
// message naming what is wrong, decided in that one function), encode_*(T)
// -> bytes and, for items callers edit in a leaf, store_*(span<u8>, T).
// Item bytes are decoded nowhere else; the on-disk structs (items.h,
// node_layout.h, super.h) are read and written only by lib/format.
//
//   backup_root.h       superblock super_roots[] slots   BackupRootRecord
//   balance_item.h      BALANCE_ITEM (flags)    BalanceItemRecord
//   block_group_item.h  BLOCK_GROUP_ITEM        BlockGroupRecord
//   chunk_item.h        CHUNK_ITEM, sys_chunk_array (decode, entries, store)   Chunk
//   csum_item.h         EXTENT_CSUM (checksums of consecutive sectors)   CsumItem
//   dev_item.h          DEV_ITEM (and the superblock's copy)   DevItemRecord
//   dev_extent.h        DEV_EXTENT              DevExtentRecord
//   dir_item.h          DIR_ITEM, DIR_INDEX, XATTR_ITEM   DirEntry
//   extent_item.h       EXTENT_ITEM, METADATA_ITEM (+ inline refs, skinny or not)   ExtentRecord, ExtentRef
//   extent_backref.h    TREE_BLOCK_REF, SHARED_BLOCK_REF, EXTENT_DATA_REF, SHARED_DATA_REF (keyed)   ExtentRef
//   file_extent.h       EXTENT_DATA (inline, regular, prealloc)   FileExtent
//   free_space_info.h   FREE_SPACE_INFO         FreeSpaceInfoRecord
//   free_space.h        FREE_SPACE_BITMAP runs
//   inode_items.h       INODE_ITEM, INODE_REF, INODE_EXTREF   InodeRecord, InodeRefEntry
//   qgroup_items.h      QGROUP_STATUS (32/40), QGROUP_INFO, QGROUP_LIMIT, QGROUP_RELATION
//   root_item.h         ROOT_ITEM (v1/v2)       RootInfo
//   root_ref.h          ROOT_REF, ROOT_BACKREF  RootRefRecord
//   uuid_item.h         UUID_SUBVOL, UUID_RECEIVED_SUBVOL
//   tree_header.h       tree block header fields   TreeBlockHeader
//   super.h             superblock byte view, validation
#pragma once
#include "lib/format/backup_root.h"
#include "lib/format/balance_item.h"
#include "lib/format/block_group_item.h"
#include "lib/format/chunk_item.h"
#include "lib/format/csum_item.h"
#include "lib/format/dev_extent.h"
#include "lib/format/dev_item.h"
#include "lib/format/dir_item.h"
#include "lib/format/extent_backref.h"
#include "lib/format/extent_item.h"
#include "lib/format/file_extent.h"
#include "lib/format/free_space.h"
#include "lib/format/free_space_info.h"
#include "lib/format/inode_items.h"
#include "lib/format/qgroup_items.h"
#include "lib/format/root_item.h"
#include "lib/format/root_ref.h"
#include "lib/format/super.h"
#include "lib/format/tree_header.h"
#include "lib/format/uuid_item.h"
