# SPDX-License-Identifier: GPL-2.0-only
"""Helpers of 013-reader-mirrors.

  damage TREE_JSON SUPER_JSON DEVID MIRROR OUT_JSON
      Damages, on the device with DEVID, the copy of EVERY tree block listed in
      TREE_JSON (fsctl dump-tree --format json of the pristine image). Physical
      places come from the CHUNK_ITEMs in the same dump (RAID1/DUP: each stripe
      is a full copy at stripe.offset + bytenr - chunk start). MIRROR = "all"
      damages every copy on that device not the only one left (RAID1); a
      number damages only that stripe index (DUP: two copies on one device).
      Three kinds of damage, by block: a flipped byte (csum mismatch), zeros,
      and a valid copy of another tree block (csum fine, wrong bytenr). Writes
      OUT_JSON: {bytenr: {"first": [devid, physical], "damaged": [[devid, physical], ...]}}.
  both TREE_JSON SUPER_JSON BYTENR
      Damages every copy of the one tree block BYTENR (flips a byte).
  check DAMAGE_JSON SUPER_JSON STDERR_FILE [--subset]
      The warnings in STDERR_FILE name exactly the blocks whose first-read
      copy was damaged (--subset: only such blocks, for commands that do not
      read every block), each with that device's path and physical offset.
"""
import json
import re
import sys


def load_layout(tree_json, super_json):
    t = json.load(open(tree_json))
    s = json.load(open(super_json))
    paths = {d["devid"]: d["device"] for d in s["devices"]}
    chunks = []
    blocks = []
    nodesize = None
    for tr in t["trees"]:
        for b in tr["blocks"]:
            blocks.append(b["bytenr"])
            if tr["root_id"] == 3:
                for it in b.get("items", []):
                    if it["key"]["type"] == 228:
                        chunks.append((it["key"]["offset"], it["data"]))
    for d in s["devices"]:
        nodesize = d["copies"][0]["superblock"]["nodesize"]
    return sorted(set(blocks)), chunks, paths, nodesize


def mirrors_of(bytenr, chunks):
    for start, c in chunks:
        if start <= bytenr < start + c["length"]:
            prof = c["type"] & ~7
            if prof not in (0, 16, 32, 512, 1024):  # single, RAID1, DUP, RAID1C3/4
                raise SystemExit("unexpected profile %s" % c["type_name"])
            return [(s["devid"], s["offset"] + bytenr - start) for s in c["stripes"]]
    raise SystemExit("no chunk for tree block %d" % bytenr)


def rw(path, off, n, data=None):
    with open(path, "r+b") as f:
        f.seek(off)
        if data is None:
            return f.read(n)
        f.write(data)


def cmd_damage(tree_json, super_json, devid, mirror, out):
    blocks, chunks, paths, ns = load_layout(tree_json, super_json)
    devid = int(devid)
    plan = {}
    pristine = {}
    for b in blocks:
        m = mirrors_of(b, chunks)
        pristine[b] = rw(paths[m[0][0]], m[0][1], ns)
        if mirror == "all":
            hit = [x for x in m if x[0] == devid]
        else:
            hit = [m[int(mirror)]] if m[int(mirror)][0] == devid else []
        if hit and len(hit) < len(m):
            plan[b] = {"first": list(m[0]), "damaged": [list(x) for x in hit]}
    for i, b in enumerate(sorted(plan)):
        for devid_, phys in plan[b]["damaged"]:
            if i % 3 == 0:
                buf = bytearray(pristine[b])
                buf[ns // 2] ^= 0x5A
                data = bytes(buf)
            elif i % 3 == 1:
                data = bytes(ns)
            else:
                other = blocks[(blocks.index(b) + 1) % len(blocks)]
                data = pristine[other]
            rw(paths[devid_], phys, ns, data)
    json.dump(plan, open(out, "w"))
    first = sum(1 for p in plan.values() if p["first"] in p["damaged"])
    print("  damaged %d of %d tree blocks on devid %d (%d of them the first copy read)" % (len(plan), len(blocks), devid, first))


def cmd_both(tree_json, super_json, bytenr):
    blocks, chunks, paths, ns = load_layout(tree_json, super_json)
    b = int(bytenr)
    for devid, phys in mirrors_of(b, chunks):
        buf = bytearray(rw(paths[devid], phys, ns))
        buf[ns // 2] ^= 0x5A
        rw(paths[devid], phys, ns, bytes(buf))
    print("  damaged every copy of tree block %d: %s" % (b, mirrors_of(b, chunks)))


WARN_RE = re.compile(r"WARNING: tree block (\d+): bad copy mirror (\d+) \((.*) physical (\d+)\): (.*); used mirror (\d+)")


def cmd_check(damage_json, super_json, stderr_file, subset=False):
    plan = {int(k): v for k, v in json.load(open(damage_json)).items()}
    paths = {d["devid"]: d["device"] for d in json.load(open(super_json))["devices"]}
    want = {b: p["first"] for b, p in plan.items() if p["first"] in p["damaged"]}
    got = {}
    errs = []
    for line in open(stderr_file):
        if "tree block" not in line:
            continue
        m = WARN_RE.search(line)
        if not m:
            errs.append("unexpected message: " + line.strip())
            continue
        b = int(m.group(1))
        got[b] = (m.group(3), int(m.group(4)))
        if b not in want:
            errs.append("warning for a block whose first copy is fine: " + line.strip())
            continue
        devid, phys = want[b]
        if m.group(3) != paths[devid] or int(m.group(4)) != phys:
            errs.append("block %d: warning names %s physical %s, damaged copy is %s physical %d" % (b, m.group(3), m.group(4), paths[devid], phys))
    for b in [] if subset else sorted(set(want) - set(got)):
        errs.append("no warning for tree block %d although its first copy (devid %d physical %d) is damaged" % (b, *want[b]))
    for e in errs[:20]:
        print("  MISMATCH mirrors: " + e, file=sys.stderr)
    if not errs:
        print("  warnings: %d, each names the damaged copy (device and physical)" % len(got))
    return 1 if errs else 0


if __name__ == "__main__":
    a = sys.argv
    if a[1] == "damage":
        cmd_damage(a[2], a[3], a[4], a[5], a[6])
    elif a[1] == "both":
        cmd_both(a[2], a[3], a[4])
    elif a[1] == "check":
        sys.exit(cmd_check(a[2], a[3], a[4], len(a) > 5 and a[5] == "--subset"))
    else:
        sys.exit("usage: see the docstring")
