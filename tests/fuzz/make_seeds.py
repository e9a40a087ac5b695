#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Regenerates the seed corpora under tests/fuzz/seeds/ from fresh mkfs.btrfs
# images (needs mkfs.btrfs and a built fsctl in $FSCTL). Run from anywhere:
#   FSCTL=build/fsctl python3 tests/fuzz/make_seeds.py
# fuzz_super:      4096-byte primary superblocks (crc32c/4K, xxhash/16K DUP, raid1 devid 1)
# fuzz_tree_block: [nodesize index][csum type] + one real tree block, per tree;
#                  and from a non-skinny image with quota and regular file
#                  extents: its extent, quota and fs tree leaves (s-*); from a
#                  simple-quota image (root, kernel 6.7+): extent leaf with
#                  EXTENT_OWNER_REFs and quota leaf with enable_gen (q-*)
# fuzz_open:       sparse images (le64 size, then (le64 offset, 4096 bytes) records)
#                  holding the superblocks and every tree block of small filesystems
import json, os, struct, subprocess, sys, tempfile

FSCTL = os.environ["FSCTL"]
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")

def mkfs(path, size, *args, files=0, file_bytes=0):
    with open(path, "wb") as f:
        f.truncate(size)
    extra = []
    if files:
        d = path + ".dir"
        os.makedirs(d, exist_ok=True)
        for i in range(files):
            with open(os.path.join(d, f"f{i}"), "wb") as f:
                f.write(os.urandom(file_bytes * (i % 3)))
        extra = ["-r", d]
    subprocess.run(["mkfs.btrfs", "-q", "-f", *args, *extra, path], check=True, capture_output=True)

def dump(img):
    out = subprocess.run([FSCTL, "inspect", "dump-tree", "--format", "json", img], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["trees"]

def chunk_map(trees):
    res = []
    for t in trees:
        if t["root_id"] != 3:
            continue
        for b in t["blocks"]:
            for it in b.get("items", []):
                if it["key"]["type_name"] == "CHUNK_ITEM":
                    res.append((it["key"]["offset"], it["data"]["length"], it["data"]["stripes"][0]["offset"]))
    return res

def phys(cmap, logical):
    for start, length, p in cmap:
        if start <= logical < start + length:
            return p + logical - start
    raise SystemExit(f"unmapped {logical}")

def read(img, off, n):
    with open(img, "rb") as f:
        f.seek(off)
        return f.read(n)

def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def main():
    tmp = tempfile.mkdtemp()
    a = os.path.join(tmp, "a.img")     # 4K nodes, crc32c, single metadata
    mkfs(a, 256 << 20, "-n", "4096", "-m", "single")
    b = os.path.join(tmp, "b.img")     # 16K nodes, xxhash, DUP metadata
    mkfs(b, 256 << 20, "--csum", "xxhash")
    n = os.path.join(tmp, "n.img")     # 4K nodes, fs tree of height 2
    mkfs(n, 128 << 20, "-n", "4096", "-m", "single", files=60)
    r1, r2 = os.path.join(tmp, "r1.img"), os.path.join(tmp, "r2.img")
    for p in (r1, r2):
        with open(p, "wb") as f:
            f.truncate(256 << 20)
    subprocess.run(["mkfs.btrfs", "-q", "-f", "-m", "raid1", "-d", "raid1", r1, r2], check=True, capture_output=True)

    for name, img in (("crc32c-4k", a), ("xxhash-16k-dup", b), ("raid1-devid1", r1)):
        write("fuzz_super", name, read(img, 65536, 4096))

    for name, img, nsidx, ct in (("a", a, 0, 0), ("n", n, 0, 0)):
        trees = dump(img)
        cmap = chunk_map(trees)
        seen = set()
        for t in trees:
            for blk in t["blocks"]:
                # one leaf per tree, and every node (nodes are rare and interesting)
                key = (t["root_id"], blk["level"])
                if blk["level"] == 0 and key in seen:
                    continue
                seen.add(key)
                data = read(img, phys(cmap, blk["bytenr"]), 4096)
                if name == "n" and t["root_id"] != 5:
                    continue
                write("fuzz_tree_block", f"{name}-{t['name'].lower()}-l{blk['level']}-{blk['bytenr']}",
                      bytes([nsidx, ct]) + data)
    # One 16K leaf (the xxhash chunk tree) for the larger nodesize path.
    trees = dump(b)
    cmap = chunk_map(trees)
    blk = next(t for t in trees if t["root_id"] == 3)["blocks"][0]
    write("fuzz_tree_block", "b-chunk-16k", bytes([2, 1]) + read(b, phys(cmap, blk["bytenr"]), 16384))

    tree_block_seeds_nonskinny(tmp)
    tree_block_seeds_squota(tmp)

    for name, img in (("a-4k-single", a), ("n-4k-single-60files", n)):
        trees = dump(img)
        cmap = chunk_map(trees)
        size = os.path.getsize(img)
        offs = [o for o in (65536, 64 << 20) if o + 4096 <= size]
        offs += sorted({phys(cmap, blk["bytenr"]) for t in trees for blk in t["blocks"]})
        rec = struct.pack("<Q", size)
        for o in offs:
            rec += struct.pack("<Q", o) + read(img, o, 4096)
        write("fuzz_open", name, rec)
    subprocess.run(["rm", "-rf", tmp])

def tree_block_seeds_nonskinny(tmp):
    """Leaves of an image without skinny metadata (EXTENT_ITEMs of tree blocks
    carry btrfs_tree_block_info), with quota items and regular file extents
    (data refs inline in the extent items): the item codecs the other seeds
    do not reach."""
    s = os.path.join(tmp, "s.img")
    mkfs(s, 256 << 20, "-n", "4096", "-m", "single", "-O", "^skinny-metadata", "-R", "quota", files=12, file_bytes=6000)
    trees = dump(s)
    cmap = chunk_map(trees)
    for t in trees:
        if t["root_id"] not in (2, 5, 8):
            continue
        want = {2: "EXTENT_ITEM", 5: "EXTENT_DATA", 8: "QGROUP_STATUS"}[t["root_id"]]
        blk = next(b for b in t["blocks"] if any(it["key"]["type_name"] == want for it in b.get("items", [])))
        write("fuzz_tree_block", f"s-{t['name'].lower()}-l0-{blk['bytenr']}", bytes([0, 0]) + read(s, phys(cmap, blk["bytenr"]), 4096))

def tree_block_seeds_squota(tmp):
    """Leaves of a simple-quota image (kernel 6.7+, made through a loop mount,
    so root only; skipped with a note elsewhere): data extent items whose
    first inline ref is an EXTENT_OWNER_REF, and the 40-byte QGROUP_STATUS
    with enable_gen."""
    if os.geteuid() != 0:
        print("squota seeds skipped: a loop mount needs root", file=sys.stderr)
        return
    q = os.path.join(tmp, "q.img")
    mkfs(q, 256 << 20, "-n", "4096", "-m", "single")
    m = os.path.join(tmp, "q.mnt")
    os.makedirs(m, exist_ok=True)
    if subprocess.run(["mount", "-o", "loop", q, m]).returncode != 0:
        print("squota seeds skipped: mount -o loop failed", file=sys.stderr)
        return
    try:
        ctl = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "quota_ctl.py")
        if subprocess.run([sys.executable, ctl, "enable-simple", m]).returncode != 0:
            print("squota seeds skipped: the kernel refuses simple quotas", file=sys.stderr)
            return
        subprocess.run(["btrfs", "subvolume", "create", os.path.join(m, "sv")], check=True, capture_output=True)
        for i in range(12):
            with open(os.path.join(m, "sv", f"f{i}"), "wb") as f:
                f.write(os.urandom(6000 * (i % 3 + 1)))
        subprocess.run(["cp", "--reflink=always", os.path.join(m, "sv", "f1"), os.path.join(m, "f1.reflink")], check=True)
    finally:
        subprocess.run(["umount", m], check=True)
    trees = dump(q)
    cmap = chunk_map(trees)
    for t in trees:
        if t["root_id"] not in (2, 8):
            continue
        if t["root_id"] == 2:
            want = lambda it: any(r.get("type") == "EXTENT_OWNER_REF" for r in it.get("data", {}).get("inline_refs", []))
        else:
            want = lambda it: it["key"]["type_name"] == "QGROUP_STATUS"
        blk = next(b for b in t["blocks"] if any(want(it) for it in b.get("items", [])))
        write("fuzz_tree_block", f"q-{t['name'].lower()}-l0-{blk['bytenr']}", bytes([0, 0]) + read(q, phys(cmap, blk["bytenr"]), 4096))

if __name__ == "__main__":
    main()
