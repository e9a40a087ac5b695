#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Test helper of the convert image tests (060-063): compares block group lists
# from `fsctl inspect block-groups --format json`, checks files against a
# fixture JSON's sha256 list, unpacks the frame-per-GiB .zst fixtures quickly,
# and edits superblock fields (every copy, checksum recomputed, crc32c only).
#
#   cvtool.py bgs-same BEFORE.json AFTER.json TREE STATE   same start/length/flags (and used of
#                                                        non-metadata groups), all items in TREE
#   cvtool.py bgs-split BEFORE.json CUR.json             print the state; fail unless every block
#                                                        group of BEFORE is in exactly one tree of CUR
#   cvtool.py files-json FIXTURE.json MNT [SUBVOL_IDS]     every file's sha256 (and size) as listed
#   cvtool.py unpack-zst SRC.zst DEST                     skips the frames that decode to zeros
#   cvtool.py super-set IMG FIELD VALUE                   FIELD: log_root|incompat_flags|flags
#   cvtool.py super-get IMG FIELD
#   cvtool.py digest IMG                                  content digest (non-zero blocks only)
import hashlib, json, os, struct, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))


def load(p):
    return json.load(open(p))


def bgs_same(before, after, tree, state):
    b, a = load(before), load(after)
    st = a["bg_tree_state"]
    assert st["state"] == state, f"state {st['state']}, expect {state}"
    key = lambda g: (g["start"], g["length"], g["flags"])
    kb = sorted(key(g) for g in b["block_groups"])
    ka = sorted(key(g) for g in a["block_groups"])
    assert kb == ka, f"block group set changed:\n before {kb}\n after  {ka}"
    ub = {g["start"]: g["used"] for g in b["block_groups"]}
    for g in a["block_groups"]:
        assert g["item_tree"] == tree, f"block group {g['start']} item in {g['item_tree']}, expect {tree}"
        # Metadata groups hold the copied tree blocks: their used may change.
        if not g["flags"] & 4:
            assert g["used"] == ub[g["start"]], f"block group {g['start']} used {ub[g['start']]} -> {g['used']}"
    n = len(ka)
    want = (n, 0) if tree == "BLOCK_GROUP_TREE" else (0, n)
    got = (st["in_block_group_tree"], st["in_extent_tree"])
    assert got == want, f"per-tree counts {got}, expect {want}"
    print(f"{n} block groups, all in {tree}, state {state}")


def bgs_split(before, cur):
    b, c = load(before), load(cur)
    kb = sorted((g["start"], g["length"], g["flags"]) for g in b["block_groups"])
    kc = sorted((g["start"], g["length"], g["flags"]) for g in c["block_groups"])
    assert kb == kc, "block group set differs from the start"
    st = c["bg_tree_state"]
    trees = {g["start"]: g["item_tree"] for g in c["block_groups"]}
    nb = sum(1 for t in trees.values() if t == "BLOCK_GROUP_TREE")
    ne = sum(1 for t in trees.values() if t == "EXTENT_TREE")
    assert nb + ne == len(kb), "a block group is in neither tree"
    assert (nb, ne) == (st["in_block_group_tree"], st["in_extent_tree"]), "counts disagree"
    if st["changing_bg_tree"]:
        # btrfs-progs' rule: moved highest first, so the moved ones are the
        # highest starts; the "new" tree is the bg tree going forward.
        new = "EXTENT_TREE" if st["compat_ro_block_group_tree"] else "BLOCK_GROUP_TREE"
        starts = sorted(trees)
        flags = [trees[s] == new for s in starts]
        k = flags.index(True) if True in flags else len(flags)
        assert all(flags[k:]) and not any(flags[:k]), "moved block groups are not the highest ones"
    print(st["state"], nb, ne)


ZERO_SHA = {}


def zero_sha(n):
    if n not in ZERO_SHA:
        h = hashlib.sha256()
        z = bytes(1 << 20)
        left = n
        while left:
            k = min(left, len(z))
            h.update(z[:k])
            left -= k
        ZERO_SHA[n] = h.hexdigest()
    return ZERO_SHA[n]


def files_json(fixture, mnt, ids=None):
    j = load(fixture)
    sv = j["subvolume_files"]
    n = skipped = 0
    bad = []
    for sid, ent in sv.items():
        if ids and sid not in ids.split(","):
            continue
        base = os.path.join(mnt, ent["path"]) if ent["path"] else mnt
        for rel, f in ent["files"].items():
            p = os.path.join(base, rel)
            st = os.lstat(p)
            if st.st_size != f["size"]:
                bad.append(f"{p}: size {st.st_size}, expect {f['size']}")
                continue
            if f["size"] >= (64 << 20) and f["sha256"] == zero_sha(f["size"]):
                # Preallocated GiBs that read as zeros: read the first and last
                # MiB instead of hashing them all (the test's time budget).
                with open(p, "rb") as fh:
                    head = fh.read(1 << 20)
                    fh.seek(f["size"] - (1 << 20))
                    tail = fh.read(1 << 20)
                if head.count(0) != len(head) or tail.count(0) != len(tail):
                    bad.append(f"{p}: not zeros")
                skipped += 1
                n += 1
                continue
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                while True:
                    d = fh.read(1 << 20)
                    if not d:
                        break
                    h.update(d)
            if h.hexdigest() != f["sha256"]:
                bad.append(f"{p}: sha256 differs")
            n += 1
    for x in bad[:20]:
        print("MISMATCH", x)
    assert not bad, f"{len(bad)} of {n} files differ"
    print(f"{n} files match the fixture's sha256 list ({skipped} large all-zero files checked by head/tail)")


def frames(data):
    """(start, end) of each zstd frame (RFC 8878 layout: header, blocks, checksum)."""
    pos = 0
    while pos < len(data):
        magic = struct.unpack_from("<I", data, pos)[0]
        if magic & 0xFFFFFFF0 == 0x184D2A50:  # skippable frame
            size = struct.unpack_from("<I", data, pos + 4)[0]
            pos += 8 + size
            continue
        assert magic == 0xFD2FB528, f"bad zstd magic at {pos}"
        start = pos
        fhd = data[pos + 4]
        pos += 5
        single = fhd >> 5 & 1
        if not single:
            pos += 1
        pos += [0, 1, 2, 4][fhd & 3]
        fcs_flag = fhd >> 6
        n = [1 if single else 0, 2, 4, 8][fcs_flag]
        fcs = int.from_bytes(data[pos:pos + n], "little") + (256 if n == 2 else 0) if n else None
        pos += n
        while True:
            bh = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            last, btype, bsize = bh & 1, bh >> 1 & 3, bh >> 3
            pos += 3 + (1 if btype == 1 else bsize)
            if last:
                break
        if fhd >> 2 & 1:
            pos += 4
        yield start, pos, fcs


def unpack_zst(src, dest):
    """Like `zstd -d --sparse`, for the frame-per-GiB fixtures: frames equal to
    the most common frame, which must decode to zeros, become holes without
    being decoded; the others are decoded into place by zstd | dd."""
    data = open(src, "rb").read()
    fr = list(frames(data))
    counts = {}
    for s, e, _ in fr:
        counts[data[s:e]] = counts.get(data[s:e], 0) + 1
    common = max(counts, key=counts.get)
    if len(fr) < 3 or counts[common] < 2 or data[fr[-1][0]:fr[-1][1]] != common:
        subprocess.run(["zstd", "-q", "-d", "--sparse", "-f", src, "-o", dest], check=True)
        print("unpacked with zstd -d")
        return
    # Decoded size and all-zero check of the common frame in one pass: cmp
    # against /dev/zero stops at the end of the frame, naming its length.
    z = subprocess.run(["sh", "-c", "zstd -q -dc | cmp - /dev/zero"], input=common, capture_output=True)
    msg = (z.stdout + z.stderr).decode()
    assert "EOF on -" in msg, "the most common frame is not zeros: " + msg
    zero_len = int(msg.split("after byte ")[1].split()[0].rstrip(","))
    assert zero_len % (1 << 20) == 0
    open(dest, "wb").close()
    off = written = 0
    for s, e, _ in fr:
        if data[s:e] != common:
            subprocess.run(["sh", "-c", f"zstd -q -dc | dd of='{dest}' bs=1M seek={off >> 20} conv=sparse,notrunc status=none"],
                           input=data[s:e], check=True)
            written += 1
        off += zero_len
    with open(dest, "r+b") as f:
        f.truncate(off)
    print(f"unpacked {len(fr)} frames ({written} not all zeros), {off} bytes")


SUPER_FIELDS = {"flags": 0x38, "log_root": 0x60, "incompat_flags": 0xBC, "compat_ro_flags": 0xB4}


def super_set(img, field, value):
    from btrfs_edit import crc32c
    off = SUPER_FIELDS[field]
    size = os.path.getsize(img)
    n = 0
    with open(img, "r+b") as f:
        for sb in (0x10000, 0x4000000, 0x4000000000):
            if sb + 4096 > size:
                continue
            f.seek(sb)
            blk = bytearray(f.read(4096))
            if blk[0x40:0x48] != b"_BHRfS_M":
                continue
            assert struct.unpack_from("<H", blk, 0xC4)[0] == 0, "crc32c images only"
            struct.pack_into("<Q", blk, off, value)
            blk[0:32] = struct.pack("<I", crc32c(bytes(blk[32:]))) + bytes(28)
            f.seek(sb)
            f.write(blk)
            n += 1
    assert n, "no superblock"
    print(f"set {field}={value:#x} in {n} superblock copies")


def super_get(img, field):
    with open(img, "rb") as f:
        f.seek(0x10000 + SUPER_FIELDS[field])
        print(struct.unpack("<Q", f.read(8))[0])


def digest(path):
    """sha256 over the non-zero 4 KiB blocks and their offsets, and the size
    (fixtures-bgt README "content_digest"): reads only the data regions of a
    sparse file, so a 260 GiB image takes a second."""
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    h = hashlib.sha256(b"fxbgt-sparse-digest-v1\0" + size.to_bytes(8, "little"))
    off = 0
    while off < size:
        try:
            d = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:
            break
        e = min(os.lseek(fd, d, os.SEEK_HOLE), size)
        for b in range(d & ~4095, e, 4096):
            blk = os.pread(fd, 4096, b)
            if blk.count(0) != len(blk):
                h.update(b.to_bytes(8, "little") + blk)
        off = (e + 4095) & ~4095
    os.close(fd)
    print(h.hexdigest())


def main():
    c, a = sys.argv[1], sys.argv[2:]
    if c == "bgs-same":
        bgs_same(*a)
    elif c == "bgs-split":
        bgs_split(*a)
    elif c == "files-json":
        files_json(*a)
    elif c == "unpack-zst":
        unpack_zst(*a)
    elif c == "super-set":
        super_set(a[0], a[1], int(a[2], 0))
    elif c == "digest":
        digest(a[0])
    elif c == "super-get":
        super_get(a[0], a[1])
    else:
        raise SystemExit("unknown command " + c)


if __name__ == "__main__":
    main()
