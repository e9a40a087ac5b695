#!/usr/bin/env bash
# 082-attack-bgt-bit-without-tree: the compat_ro bit BLOCK_GROUP_TREE is set
# (superblock checksum fixed) on a filesystem that has no tree 11 and keeps
# every BLOCK_GROUP_ITEM in the extent tree; the kernel and btrfs check refuse
# it ("couldn't load block group tree"). Today:
#  - `convert --no-bg-tree` exits 3 ("tree BLOCK_GROUP_TREE does not exist")
#    AFTER committing its first transaction: the image changed and now also
#    carries CHANGING_BG_TREE;
#  - `convert --bg-tree` exits 0 "nothing to do: block group items are
#    already in the block group tree", which is false.
# Expected: both refuse before any write with exit 3 and one ERROR line
# naming the image and what is inconsistent (the block group tree bit is set
# but tree 11 does not exist / the items are in the extent tree); image
# byte-identical.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"

img="$T/a.img"
mkimg "$img" 256M -n 4096
python3 - "$img" "$FSCTL_SRC/tests/image/common" <<'PY'
import os, struct, sys
sys.path.insert(0, sys.argv[2])
os.environ.setdefault("FSCTL", "fsctl")
from btrfs_edit import crc32c
img = sys.argv[1]
with open(img, "r+b") as f:
    for m in (0x10000, 0x4000000):
        f.seek(m); b = bytearray(f.read(4096))
        if b[64:72] != b"_BHRfS_M": continue
        cro = struct.unpack_from("<Q", b, 180)[0] | 8   # compat_ro BLOCK_GROUP_TREE
        struct.pack_into("<Q", b, 180, cro)
        b[0:32] = struct.pack("<I", crc32c(bytes(b[32:]))) + bytes(28)
        f.seek(m); f.write(b)
PY
snap "$img"
expect 3 "$FSCTL" convert --no-bg-tree "$img"
unchanged "$img"
says "$img"
expect 3 "$FSCTL" convert --bg-tree "$img"
unchanged "$img"
says "$img"
echo "082-attack-bgt-bit-without-tree: ok"
