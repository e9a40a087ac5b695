#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Checks of chunks, dev extents, block group items, free space info and
# DEV_ITEM bytes_used, read with btrfs-progs' dump-tree / dump-super (the
# reference reader, not ours). Used by the chunk allocation tests 100-102.
#
#   chunk_check.py verify-new DEV LOGICAL TYPE STRIPES [DEVIDS]
#       the chunk at LOGICAL exists with type TYPE (dump-tree spelling, e.g.
#       METADATA|DUP), STRIPES stripes (on the comma-separated DEVIDS when
#       given; on distinct devices unless DUP), one DEV_EXTENT per stripe
#       naming it with the stripe length,
#       a BLOCK_GROUP_ITEM with the same flags and a FREE_SPACE_INFO;
#       SYSTEM chunks are in sys_chunk_array
#   chunk_check.py verify-gone DEV LOGICAL LENGTH
#       no chunk item, sys_chunk_array entry, dev extent, block group item or
#       free space item of [LOGICAL, LOGICAL+LENGTH) is left
#   chunk_check.py bytes-used DEV...
#       prints "devid bytes_used" per DEV_ITEM and checks that bytes_used is
#       the sum of the device's DEV_EXTENT lengths and equals the dev_item of
#       that device's own superblock (each DEV given, in devid order)
#   chunk_check.py sys-array DEV      prints the logicals in sys_chunk_array
#   chunk_check.py chunks DEV         prints "logical length type" per chunk
import re
import subprocess
import sys


def run(*args):
    p = subprocess.run(["btrfs", "inspect-internal", *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("btrfs inspect-internal %s failed: %s" % (" ".join(args), p.stderr))
    return p.stdout


def items(dev, tree):
    """(key objectid, key type, key offset, body lines) per item of `tree`."""
    out = []
    cur = None
    for line in run("dump-tree", "-t", tree, dev).splitlines():
        m = re.match(r"\s+item \d+ key \((\S+) (\S+) (\d+)\) itemoff", line)
        if m:
            cur = (m.group(1), m.group(2), int(m.group(3)), [])
            out.append(cur)
        elif cur is not None and line.startswith("\t\t"):
            cur[3].append(line.strip())
        elif not line.startswith("\t"):
            cur = None
    return out


def field(lines, name):
    for l in lines:
        m = re.search(r"(?:^|\s)" + re.escape(name) + r" (\S+)", l)
        if m:
            return m.group(1)
    return None


def chunks(dev):
    res = {}
    for oid, typ, off, body in items(dev, "chunk"):
        if typ != "CHUNK_ITEM":
            continue
        stripes = []
        for l in body:
            m = re.match(r"stripe \d+ devid (\d+) offset (\d+)", l)
            if m:
                stripes.append((int(m.group(1)), int(m.group(2))))
        res[off] = {"length": int(field(body, "length")), "type": field(body, "type"),
                    "num_stripes": int(field(body, "num_stripes")), "stripes": stripes}
    return res


def dev_extents(dev):
    res = []
    for oid, typ, off, body in items(dev, "dev"):
        if typ == "DEV_EXTENT":
            res.append({"devid": int(oid), "physical": off, "chunk_offset": int(field(body, "chunk_offset")),
                        "length": int(field(body, "length"))})
    return res


def bg_items(dev):
    res = {}
    super_text = run("dump-super", dev)
    trees = ["extent"]
    m = re.search(r"compat_ro_flags\s+(0x[0-9a-f]+)", super_text)
    if m and int(m.group(1), 16) & 0x8:  # BLOCK_GROUP_TREE
        trees = ["11", "extent"]
    for t in trees:
        try:
            its = items(dev, t)
        except SystemExit:
            continue
        for oid, typ, off, body in its:
            if typ == "BLOCK_GROUP_ITEM":
                res[int(oid)] = {"length": off, "flags": field(body, "flags"), "used": int(field(body, "used"))}
    return res


def fst_keys(dev):
    return [(int(oid), typ, off) for oid, typ, off, _ in items(dev, "10") if typ.startswith("FREE_SPACE")]


def sys_array(dev):
    text = run("dump-super", "-f", dev)
    part = text.split("sys_chunk_array", 1)[1].split("backup_roots", 1)[0]
    return [int(x) for x in re.findall(r"CHUNK_ITEM (\d+)\)", part)]


def verify_new(dev, logical, want_type, want_stripes, devids=None):
    cs = chunks(dev)
    if logical not in cs:
        sys.exit("no chunk item at %d" % logical)
    c = cs[logical]
    if c["type"] != want_type:
        sys.exit("chunk %d has type %s expect %s" % (logical, c["type"], want_type))
    if c["num_stripes"] != want_stripes or len(c["stripes"]) != want_stripes:
        sys.exit("chunk %d has %d stripes expect %d" % (logical, c["num_stripes"], want_stripes))
    if "DUP" not in want_type and len({d for d, _ in c["stripes"]}) != len(c["stripes"]):
        sys.exit("chunk %d of type %s has two stripes on one device: %s" % (logical, want_type, c["stripes"]))
    if devids is not None and sorted(d for d, _ in c["stripes"]) != sorted(devids):
        sys.exit("chunk %d stripes on devids %s expect %s" % (logical, [d for d, _ in c["stripes"]], devids))
    exts = [e for e in dev_extents(dev) if e["chunk_offset"] == logical]
    if sorted((e["devid"], e["physical"]) for e in exts) != sorted(c["stripes"]):
        sys.exit("dev extents of chunk %d are %s, its stripes %s" % (logical, exts, c["stripes"]))
    lengths = {e["length"] for e in exts}
    if len(lengths) != 1:
        sys.exit("dev extents of chunk %d have different lengths %s" % (logical, lengths))
    bgs = bg_items(dev)
    if logical not in bgs or bgs[logical]["length"] != c["length"]:
        sys.exit("no BLOCK_GROUP_ITEM (%d, %d)" % (logical, c["length"]))
    if bgs[logical]["flags"] != want_type:
        sys.exit("block group %d has flags %s expect %s" % (logical, bgs[logical]["flags"], want_type))
    if (logical, "FREE_SPACE_INFO", c["length"]) not in fst_keys(dev):
        sys.exit("no FREE_SPACE_INFO (%d, %d)" % (logical, c["length"]))
    in_array = logical in sys_array(dev)
    if want_type.startswith("SYSTEM") != in_array:
        sys.exit("chunk %d %s sys_chunk_array" % (logical, "missing from" if not in_array else "wrongly in"))
    print("chunk %d: %s, %d stripes of %d bytes %s, dev extents, block group item, free space info%s" %
          (logical, c["type"], c["num_stripes"], lengths.pop(), c["stripes"], ", in sys_chunk_array" if in_array else ""))


def verify_gone(dev, logical, length):
    if logical in chunks(dev):
        sys.exit("chunk item %d is still there" % logical)
    if logical in sys_array(dev):
        sys.exit("chunk %d is still in sys_chunk_array" % logical)
    if any(e["chunk_offset"] == logical for e in dev_extents(dev)):
        sys.exit("a dev extent still names chunk %d" % logical)
    if logical in bg_items(dev):
        sys.exit("block group item %d is still there" % logical)
    left = [k for k in fst_keys(dev) if logical <= k[0] < logical + length]
    if left:
        sys.exit("free space items %s of the removed range are still there" % left[:5])
    print("chunk %d: no chunk item, sys_chunk_array entry, dev extent, block group item or free space item left" % logical)


def bytes_used(devs):
    dev = devs[0]
    used = {}
    for oid, typ, off, body in items(dev, "chunk"):
        if typ == "DEV_ITEM":
            used[off] = int(field(body, "bytes_used"))
    sums = {}
    for e in dev_extents(dev):
        sums[e["devid"]] = sums.get(e["devid"], 0) + e["length"]
    for devid, u in sorted(used.items()):
        if sums.get(devid, 0) != u:
            sys.exit("devid %d: DEV_ITEM bytes_used %d, its dev extents sum to %d" % (devid, u, sums.get(devid, 0)))
    for d in devs:
        text = run("dump-super", d)
        devid = int(re.search(r"dev_item.devid\s+(\d+)", text).group(1))
        sb_used = int(re.search(r"dev_item.bytes_used\s+(\d+)", text).group(1))
        if sb_used != used.get(devid):
            sys.exit("%s: superblock dev_item bytes_used %d, DEV_ITEM of devid %d says %s" % (d, sb_used, devid, used.get(devid)))
    for devid, u in sorted(used.items()):
        print(devid, u)


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    cmd = a[0]
    if cmd == "verify-new":
        verify_new(a[1], int(a[2]), a[3], int(a[4]), [int(x) for x in a[5].split(",")] if len(a) > 5 else None)
    elif cmd == "verify-gone":
        verify_gone(a[1], int(a[2]), int(a[3]))
    elif cmd == "bytes-used":
        bytes_used(a[1:])
    elif cmd == "sys-array":
        print(" ".join(str(x) for x in sys_array(a[1])))
    elif cmd == "chunks":
        for l, c in sorted(chunks(a[1]).items()):
            print(l, c["length"], c["type"])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
