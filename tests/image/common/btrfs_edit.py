#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Test-only editor of single-device btrfs images, used by the bad-input image
# tests to damage one tree block on purpose. Chunks (logical -> physical per
# copy) come from `fsctl inspect dump-tree --format json -t chunk`, so the
# edit lands in every copy (DUP). crc32c is written here from the published
# polynomial, only to re-checksum an edited block (csum type crc32c only).
#
#   btrfs_edit.py phys IMG LOGICAL                 physical offset of each copy
#   btrfs_edit.py blocks IMG TREE                  "bytenr level generation nritems" per block, DFS order
#   btrfs_edit.py ptrs IMG BYTENR                  "slot blockptr generation" of a node
#   btrfs_edit.py flip IMG LOGICAL OFFSET          xor a byte of the block in every copy (no csum fix)
#   btrfs_edit.py setptr IMG NODE SLOT FIELD VALUE set blockptr|generation of a key pointer, fix csum
#   btrfs_edit.py setu64 IMG LOGICAL OFFSET VALUE  write a le64 at OFFSET of the block, fix csum
#   btrfs_edit.py shrink IMG LEAF SLOT BYTES       cut the last BYTES bytes of item SLOT's data (the
#                                                  items after it move up, the leaf stays packed), fix csum
import json, os, struct, subprocess, sys

FSCTL = os.environ["FSCTL"]
HEADER = 101
KEY_PTR = 33

def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t
_T = _table()

def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _T[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF

assert crc32c(b"123456789") == 0xE3069283  # the standard check value

def dump(img, tree):
    out = subprocess.run([FSCTL, "inspect", "dump-tree", "--format", "json", "-t", tree, img],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["trees"][0]["blocks"]

def chunks(img):
    res = []
    for b in dump(img, "chunk"):
        for it in b.get("items", []):
            if it["key"]["type_name"] == "CHUNK_ITEM":
                d = it["data"]
                res.append((it["key"]["offset"], d["length"], [s["offset"] for s in d["stripes"]], d["type_name"]))
    return res

def phys(img, logical):
    for start, length, stripes, tname in chunks(img):
        if start <= logical < start + length:
            assert "RAID" not in tname, "striped profiles not handled by this helper"
            return [s + logical - start for s in stripes]
    raise SystemExit(f"logical {logical} not mapped")

def nodesize(img):
    with open(img, "rb") as f:
        f.seek(0x10000 + 0x94)
        return struct.unpack("<I", f.read(4))[0]

def csum_type(img):
    with open(img, "rb") as f:
        f.seek(0x10000 + 0xC4)
        return struct.unpack("<H", f.read(2))[0]

def edit_block(img, logical, fn, fix_csum):
    ns = nodesize(img)
    if fix_csum:
        assert csum_type(img) == 0, "only crc32c images can be re-checksummed"
    with open(img, "r+b") as f:
        for p in phys(img, logical):
            f.seek(p)
            blk = bytearray(f.read(ns))
            assert struct.unpack_from("<Q", blk, 48)[0] == logical, f"no block {logical} at physical {p}"
            fn(blk)
            if fix_csum:
                blk[0:32] = struct.pack("<I", crc32c(bytes(blk[32:]))) + bytes(28)
            f.seek(p)
            f.write(blk)
            print(f"edited block {logical} at physical {p}")

def main():
    cmd, img = sys.argv[1], sys.argv[2]
    a = sys.argv[3:]
    if cmd == "phys":
        print(" ".join(map(str, phys(img, int(a[0])))))
    elif cmd == "blocks":
        for b in dump(img, a[0]):
            print(b["bytenr"], b["level"], b["generation"], b["nritems"])
    elif cmd == "ptrs":
        ns = nodesize(img)
        with open(img, "rb") as f:
            f.seek(phys(img, int(a[0]))[0])
            blk = f.read(ns)
        n, level = struct.unpack_from("<IB", blk, 96)
        assert level > 0, "not a node"
        for i in range(n):
            bp, gen = struct.unpack_from("<QQ", blk, HEADER + i * KEY_PTR + 17)
            print(i, bp, gen)
    elif cmd == "flip":
        off = int(a[1])
        def fn(blk):
            blk[off] ^= 0xFF
        edit_block(img, int(a[0]), fn, False)
    elif cmd == "setptr":
        slot, field, value = int(a[1]), a[2], int(a[3])
        rel = {"blockptr": 17, "generation": 25}[field]
        def fn(blk):
            struct.pack_into("<Q", blk, HEADER + slot * KEY_PTR + rel, value)
        edit_block(img, int(a[0]), fn, True)
    elif cmd == "setu64":
        off, value = int(a[1]), int(a[2])
        def fn(blk):
            struct.pack_into("<Q", blk, off, value)
        edit_block(img, int(a[0]), fn, True)
    elif cmd == "shrink":
        slot, cut = int(a[1]), int(a[2])
        def fn(blk):
            n, level = struct.unpack_from("<IB", blk, 96)
            assert level == 0 and slot < n, "not a leaf or no such slot"
            item = lambda i: HEADER + i * 25 + 17  # le32 offset, le32 size after the 17-byte key
            off, size = struct.unpack_from("<II", blk, item(slot))
            assert cut <= size, "item smaller than the cut"
            low = struct.unpack_from("<I", blk, item(n - 1))[0]
            # Data of items slot..n-1 lies in [low, off + size); keep all of it but the cut tail.
            keep = bytes(blk[HEADER + low:HEADER + off + size - cut])
            blk[HEADER + low:HEADER + low + cut] = bytes(cut)
            blk[HEADER + low + cut:HEADER + off + size] = keep
            for i in range(slot, n):
                o, sz = struct.unpack_from("<II", blk, item(i))
                struct.pack_into("<II", blk, item(i), o + cut, sz - cut if i == slot else sz)
        edit_block(img, int(a[0]), fn, True)
    else:
        raise SystemExit("unknown command " + cmd)

if __name__ == "__main__":
    main()
