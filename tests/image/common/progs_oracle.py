# SPDX-License-Identifier: GPL-2.0-only
"""Compare fsctl's `inspect` JSON with the text of btrfs-progs' inspect-internal.

Used by the reader acceptance tests (tests/image/01x-*). Subcommands:

  super  FSCTL_JSON PROGS_TXT      dump-super --all-mirrors vs dump-super -f -a:
                                   every field both print, every copy, every device
  trees  FSCTL_JSON PROGS_TXT [--min-level N]
                                   dump-tree vs dump-tree --dfs: per tree, the
                                   blocks in DFS order (bytenr, level, nritems,
                                   generation, owner) and every key (leaf items
                                   and node pointers with blockptr and gen)
  bgs    FSCTL_JSON PROGS_TXT [--fixture NAME.json]
                                   block-groups vs the BLOCK_GROUP_ITEMs of the
                                   extent tree and block group tree in a progs
                                   dump-tree text (and the fixture's
                                   block_groups.list)

Progs prints names for some objectids, key types and offsets (print-tree.c:
print_objectid, print_key_type, btrfs_print_key); the tables below turn them
back into numbers so the comparison is numeric. An unknown name is an error,
not a silent skip. Exit 0 = equal, 1 = differences (listed on stderr).
"""
import json
import re
import sys

U64 = 1 << 64


def neg(v):
    return (U64 + v) % U64


OBJECTID_NAMES = {
    "ROOT_TREE": 1, "DEV_ITEMS": 1, "EXTENT_TREE": 2, "CHUNK_TREE": 3, "DEV_TREE": 4,
    "FS_TREE": 5, "ROOT_TREE_DIR": 6, "CSUM_TREE": 7, "QUOTA_TREE": 8, "UUID_TREE": 9,
    "FREE_SPACE_TREE": 10, "BLOCK_GROUP_TREE": 11, "DEV_STATS": 0,
    "BALANCE": neg(-4), "ORPHAN": neg(-5), "TREE_LOG": neg(-6), "LOG_FIXUP": neg(-7),
    "TREE_LOG_FIXUP": neg(-7), "TREE_RELOC": neg(-8), "DATA_RELOC_TREE": neg(-9),
    "EXTENT_CSUM": neg(-10), "FREE_SPACE": neg(-11), "FREE_INO": neg(-12),
    "MULTIPLE": neg(-255), "FIRST_CHUNK_TREE": 256, "-1": U64 - 1,
}

KEY_TYPE_NAMES = {
    "UNTYPED": 0, "INODE_ITEM": 1, "INODE_REF": 12, "INODE_EXTREF": 13, "XATTR_ITEM": 24,
    "VERITY_DESC_ITEM": 36, "VERITY_MERKLE_ITEM": 37, "ORPHAN_ITEM": 48,
    "DIR_LOG_ITEM": 60, "DIR_LOG_INDEX": 72, "DIR_ITEM": 84, "DIR_INDEX": 96,
    "EXTENT_DATA": 108, "CSUM_ITEM": 120, "EXTENT_CSUM": 128, "ROOT_ITEM": 132,
    "ROOT_BACKREF": 144, "ROOT_REF": 156, "EXTENT_ITEM": 168, "METADATA_ITEM": 169,
    "EXTENT_OWNER_REF": 172, "TREE_BLOCK_REF": 176, "EXTENT_DATA_REF": 178,
    "EXTENT_REF_V0": 180, "SHARED_BLOCK_REF": 182, "SHARED_DATA_REF": 184,
    "BLOCK_GROUP_ITEM": 192, "FREE_SPACE_INFO": 198, "FREE_SPACE_EXTENT": 199,
    "FREE_SPACE_BITMAP": 200, "DEV_EXTENT": 204, "DEV_ITEM": 216, "CHUNK_ITEM": 228,
    "QGROUP_STATUS": 240, "QGROUP_INFO": 242, "QGROUP_LIMIT": 244, "QGROUP_RELATION": 246,
    "TEMPORARY_ITEM": 248, "BALANCE_ITEM": 248, "PERSISTENT_ITEM": 249, "DEV_STATS_ITEM": 249,
    "DEV_REPLACE": 250, "UUID_KEY_SUBVOL": 251, "UUID_KEY_RECEIVED_SUBVOL": 252,
    "STRING_ITEM": 253,
}

BG_FLAG_NAMES = {
    "DATA": 1, "SYSTEM": 2, "METADATA": 4, "RAID0": 8, "RAID1": 16, "DUP": 32,
    "RAID10": 64, "RAID5": 128, "RAID6": 256, "RAID1C3": 512, "RAID1C4": 1024, "single": 0,
    "SINGLE": 0,
}


class ParseError(Exception):
    pass


def parse_objectid(s):
    """Progs objectid text -> u64 ("0/257" is a qgroupid, "0x..." a UUID half)."""
    if s in OBJECTID_NAMES:
        return OBJECTID_NAMES[s]
    m = re.fullmatch(r"(\d+)/(\d+)", s)
    if m:
        return (int(m.group(1)) << 48) | int(m.group(2))
    if s.startswith("0x"):
        return int(s, 16)
    if re.fullmatch(r"-?\d+", s):
        return int(s) % U64
    raise ParseError("unknown objectid name %r (add it to OBJECTID_NAMES)" % s)


def parse_type(s):
    if s in KEY_TYPE_NAMES:
        return KEY_TYPE_NAMES[s]
    m = re.fullmatch(r"UNKNOWN\.(\d+)", s)
    if m:
        return int(m.group(1))
    if re.fullmatch(r"\d+", s):
        return int(s)
    raise ParseError("unknown key type name %r (add it to KEY_TYPE_NAMES)" % s)


KEY_RE = re.compile(r"key \((\S+) (\S+) (\S+)\)")


def parse_key(m):
    return (parse_objectid(m.group(1)), parse_type(m.group(2)), parse_objectid(m.group(3)))


def fmt_key(k):
    return "(%d %d %d)" % k


def jkey(k):
    return (k["objectid"] % U64, k["type"], k["offset"] % U64)


# ------------------------------------------------------------------ dump-super

# progs dump-super field -> fsctl JSON field (None: printed only by progs, by design)
SUPER_FIELD_MAP = {
    "log_root_transid (deprecated)": "log_root_transid",
    "leafsize (deprecated)": "leafsize",
    "block_group_root": None, "block_group_root_generation": None, "block_group_root_level": None,
}
# fsctl fields that progs does not print (or prints in another shape)
FSCTL_ONLY = {"csum_type_name", "flags_names", "compat_ro_flags_names", "incompat_flags_names",
              "dev_item", "backup_roots"}


def norm(v):
    v = v.strip()
    for suf in (" [match]",):
        if v.endswith(suf):
            v = v[: -len(suf)]
    m = re.fullmatch(r"(\d+) \(.*\)", v)  # csum_type "1 (xxhash64)"
    if m:
        return int(m.group(1))
    if re.fullmatch(r"0x[0-9a-fA-F]+", v) and len(v) <= 18:
        return int(v, 16)
    if re.fullmatch(r"\d+", v):
        return int(v)
    return v


def parse_progs_super(text):
    """-> list of (device, bytenr, fields{name: value}, backups[list of dict])."""
    out = []
    cur = None
    backup = None
    section = None
    for line in text.splitlines():
        m = re.match(r"superblock: bytenr=(\d+), device=(.*)$", line)
        if m:
            cur = {"device": m.group(2), "bytenr": int(m.group(1)), "fields": {}, "backups": []}
            out.append(cur)
            section = None
            continue
        if cur is None or not line.strip() or line.startswith("---"):
            continue
        if line.startswith("sys_chunk_array["):
            section = "sys"
            continue
        if line.startswith("backup_roots["):
            section = "backup"
            continue
        if section == "sys":
            continue
        if section == "backup":
            m = re.match(r"\s+backup (\d+):", line)
            if m:
                backup = {}
                cur["backups"].append(backup)
                continue
            m = re.match(r"\s+(\w+):\s+(\d+)(?:\s+gen: (\d+)\s+level: (\d+))?", line)
            if m and backup is not None:
                backup[m.group(1)] = int(m.group(2))
                if m.group(3) is not None:
                    backup[m.group(1) + "_gen"] = int(m.group(3))
                    backup[m.group(1) + "_level"] = int(m.group(4))
            continue
        if line.startswith("\t") or line.startswith(" "):
            continue  # continuation of a flags line: "( WRITTEN )"
        parts = re.split(r"\t+", line, maxsplit=1)
        name = parts[0]
        value = parts[1] if len(parts) > 1 else ""
        # the csum is a byte string: compare its hex text, not a number
        cur["fields"][name] = value.split(" ")[0] if name == "csum" else norm(value)
    return out


BACKUP_MAP = {  # progs backup line name -> fsctl backup_roots field
    "backup_tree_root": "tree_root", "backup_chunk_root": "chunk_root",
    "backup_extent_root": "extent_root", "backup_fs_root": "fs_root",
    "backup_dev_root": "dev_root", "csum_root": "csum_root",
    "backup_total_bytes": "total_bytes", "backup_bytes_used": "bytes_used",
    "backup_num_devices": "num_devices",
}


def cmd_super(fsctl_path, progs_path):
    ours = json.load(open(fsctl_path))
    progs = parse_progs_super(open(progs_path).read())
    errs = []
    our_copies = {}
    for d in ours["devices"]:
        for c in d["copies"]:
            our_copies[(d["device"], c["bytenr"])] = c
    if not progs:
        errs.append("progs printed no superblock")
    compared = 0
    for p in progs:
        c = our_copies.get((p["device"], p["bytenr"]))
        if c is None:
            errs.append("%s bytenr %d: progs shows a superblock copy fsctl does not" % (p["device"], p["bytenr"]))
            continue
        sb = c.get("superblock")
        if not p["fields"]:
            # progs refused the copy ("bad magic"): fsctl must call it invalid too
            if c.get("valid", True):
                errs.append("%s bytenr %d: progs rejects this copy, fsctl calls it valid" % (p["device"], p["bytenr"]))
            continue
        if sb is None:
            errs.append("%s bytenr %d: fsctl has no decoded superblock" % (p["device"], p["bytenr"]))
            continue
        where = "%s@%d" % (p["device"], p["bytenr"])
        for name, pv in p["fields"].items():
            if name.startswith("dev_item."):
                key = name[len("dev_item."):]
                if key not in sb["dev_item"]:
                    errs.append("%s: fsctl lacks %s" % (where, name))
                    continue
                ov = sb["dev_item"][key]
            else:
                key = SUPER_FIELD_MAP.get(name, name)
                if key is None:
                    continue
                if key not in sb:
                    errs.append("%s: progs field %r has no fsctl counterpart" % (where, name))
                    continue
                ov = sb[key]
            if name == "label":
                # progs prints each byte outside printable ASCII as '.'
                ov = "".join(chr(c) if 0x20 <= c < 0x7F else "." for c in ov.encode("utf-8", "surrogateescape"))
                same = ov == pv
            elif isinstance(ov, str) and isinstance(pv, str):
                same = ov.lower() == pv.lower()
            else:
                same = ov == pv
            if not same:
                errs.append("%s: %s: fsctl %r, progs %r" % (where, name, ov, pv))
            compared += 1
        if p["backups"]:
            ob = sb.get("backup_roots", [])
            if len(ob) != len(p["backups"]):
                errs.append("%s: %d backup roots, progs %d" % (where, len(ob), len(p["backups"])))
            for i, (pb, b) in enumerate(zip(p["backups"], ob)):
                for pn, on in BACKUP_MAP.items():
                    for sfx in ("", "_gen"):
                        if pn + sfx in pb:
                            compared += 1
                            if b.get(on + sfx) != pb[pn + sfx]:
                                errs.append("%s: backup %d %s: fsctl %r, progs %r" % (where, i, pn + sfx, b.get(on + sfx), pb[pn + sfx]))
    return errs, "%d superblock copies, %d fields" % (len(progs), compared)


# ------------------------------------------------------------------ dump-tree

TREE_HDR_RE = re.compile(r"^(.*) tree key \((\S+) ROOT_ITEM (\S+)\) ?$")
LEAF_RE = re.compile(r"^leaf (\d+) items (\d+) free space (-?\d+) generation (\d+) owner (\S+)$")
NODE_RE = re.compile(r"^node (\d+) level (\d+) items (\d+) free space (-?\d+) generation (\d+) owner (\S+)$")
ITEM_RE = re.compile(r"^\titem (\d+) key \((\S+) (\S+) (\S+)\) itemoff (\d+) itemsize (\d+)$")
PTR_RE = re.compile(r"^\tkey \((\S+) (\S+) (\S+)\) block (\d+) gen(?:eration)? (\d+)$")
BG_RE = re.compile(r"^\t\tblock group used (\d+) chunk_objectid (\d+) flags (\S+)")


def parse_progs_trees(text):
    trees = []
    tree = None
    block = None
    last_item = None
    for line in text.splitlines():
        if line in ("root tree", "chunk tree", "log root tree"):
            rid = {"root tree": 1, "chunk tree": 3, "log root tree": neg(-6)}[line]
            tree = {"root_id": rid, "key_offset": None, "title": line, "blocks": []}
            trees.append(tree)
            block = None
            continue
        m = TREE_HDR_RE.match(line)
        if m and not line.startswith("\t"):
            tree = {"root_id": parse_objectid(m.group(2)), "key_offset": parse_objectid(m.group(3)),
                    "title": line.strip(), "blocks": []}
            trees.append(tree)
            block = None
            continue
        m = LEAF_RE.match(line)
        if m:
            block = {"bytenr": int(m.group(1)), "level": 0, "nritems": int(m.group(2)),
                     "generation": int(m.group(4)), "owner": parse_objectid(m.group(5)), "keys": [], "ptrs": []}
            if tree is None:
                raise ParseError("block before any tree header: " + line)
            tree["blocks"].append(block)
            continue
        m = NODE_RE.match(line)
        if m:
            block = {"bytenr": int(m.group(1)), "level": int(m.group(2)), "nritems": int(m.group(3)),
                     "generation": int(m.group(5)), "owner": parse_objectid(m.group(6)), "keys": [], "ptrs": []}
            if tree is None:
                raise ParseError("block before any tree header: " + line)
            tree["blocks"].append(block)
            continue
        m = ITEM_RE.match(line)
        if m and block is not None:
            k = (parse_objectid(m.group(2)), parse_type(m.group(3)), parse_objectid(m.group(4)))
            # UUID keys print the offset as 0x%016llx and qgroup keys as a/b;
            # parse_objectid handles both, a plain decimal otherwise.
            block["keys"].append(k)
            last_item = (tree, k)
            continue
        m = PTR_RE.match(line)
        if m and block is not None:
            k = (parse_objectid(m.group(1)), parse_type(m.group(2)), parse_objectid(m.group(3)))
            block["ptrs"].append((k, int(m.group(4)), int(m.group(5))))
            continue
        m = BG_RE.match(line)
        if m and last_item is not None and last_item[1][1] == 192:
            t, k = last_item
            flags = 0
            for f in m.group(3).split("|"):
                if f not in BG_FLAG_NAMES:
                    raise ParseError("unknown block group flag %r" % f)
                flags |= BG_FLAG_NAMES[f]
            t.setdefault("bg_items", []).append({"start": k[0], "length": k[2], "used": int(m.group(1)),
                                                 "chunk_objectid": int(m.group(2)), "flags": flags})
            last_item = None
    return trees


def our_trees(j):
    out = []
    for t in j["trees"]:
        m = re.search(r"key \((\d+) \S+ (\d+)\)", t["title"])
        tr = {"root_id": t["root_id"] % U64, "key_offset": int(m.group(2)) if m else None, "title": t["title"],
              "blocks": [], "error": t.get("error")}
        for b in t["blocks"]:
            blk = {"bytenr": b["bytenr"], "level": b["level"], "nritems": b["nritems"], "generation": b["generation"],
                   "owner": b["owner"] % U64, "keys": [], "ptrs": []}
            for it in b.get("items", []):
                blk["keys"].append(jkey(it["key"]))
            for p in b.get("ptrs", []):
                blk["ptrs"].append((jkey(p["key"]), p["blockptr"], p["generation"]))
            tr["blocks"].append(blk)
        out.append(tr)
    return out


def compare_trees(ours, progs, errs, limit=40):
    def add(msg):
        if len(errs) < limit:
            errs.append(msg)
        elif len(errs) == limit:
            errs.append("... (more differences not shown)")

    oi = [(t["root_id"], t["key_offset"]) for t in ours]
    pi = [(t["root_id"], t["key_offset"]) for t in progs]
    if oi != pi:
        add("tree list differs:\n  fsctl %s\n  progs %s" % (oi, pi))
    nkeys = 0
    nblocks = 0
    progs_by = {}
    for t in progs:
        progs_by.setdefault((t["root_id"], t["key_offset"]), []).append(t)
    for t in ours:
        cand = progs_by.get((t["root_id"], t["key_offset"]))
        if not cand:
            continue
        p = cand.pop(0)
        name = "tree %d (%s)" % (t["root_id"] if t["root_id"] < (1 << 63) else t["root_id"] - U64, p["title"])
        if t.get("error"):
            add("%s: fsctl error: %s" % (name, t["error"]))
        if len(t["blocks"]) != len(p["blocks"]):
            add("%s: %d blocks, progs %d" % (name, len(t["blocks"]), len(p["blocks"])))
        for ob, pb in zip(t["blocks"], p["blocks"]):
            nblocks += 1
            for f in ("bytenr", "level", "nritems", "generation", "owner"):
                if ob[f] != pb[f]:
                    add("%s: block %d: %s fsctl %d, progs %d" % (name, pb["bytenr"], f, ob[f], pb[f]))
            if ob["keys"] != pb["keys"]:
                for i, (a, b) in enumerate(zip(ob["keys"], pb["keys"])):
                    if a != b:
                        add("%s: leaf %d slot %d: fsctl key %s, progs %s" % (name, pb["bytenr"], i, fmt_key(a), fmt_key(b)))
                        break
                else:
                    add("%s: leaf %d: %d keys, progs %d" % (name, pb["bytenr"], len(ob["keys"]), len(pb["keys"])))
            if ob["ptrs"] != pb["ptrs"]:
                add("%s: node %d: pointers differ: fsctl %s... progs %s..." % (name, pb["bytenr"], ob["ptrs"][:3], pb["ptrs"][:3]))
            nkeys += len(pb["keys"]) + len(pb["ptrs"])
    return nblocks, nkeys


def cmd_trees(fsctl_path, progs_path, min_level=None):
    ours = our_trees(json.load(open(fsctl_path)))
    progs = parse_progs_trees(open(progs_path).read())
    errs = []
    nb, nk = compare_trees(ours, progs, errs)
    if not progs:
        errs.append("progs printed no tree")
    maxlevel = {}
    for t in progs:
        if t["blocks"]:
            maxlevel[t["root_id"]] = max(maxlevel.get(t["root_id"], 0), max(b["level"] for b in t["blocks"]))
    summary = "%d trees, %d blocks, %d keys; max level: extent %s fs %s" % (
        len(progs), nb, nk, maxlevel.get(2), maxlevel.get(5))
    if min_level is not None:
        for rid, name in ((2, "extent"), (5, "fs")):
            if maxlevel.get(rid, -1) < min_level:
                errs.append("the %s tree has level %s, the test wants >= %d (fill the image more)" % (name, maxlevel.get(rid), min_level))
    return errs, summary


# ------------------------------------------------------------------ block groups

def cmd_bgs(fsctl_path, progs_path, fixture=None):
    ours = json.load(open(fsctl_path))["block_groups"]
    progs = parse_progs_trees(open(progs_path).read())
    items = []
    for t in progs:
        if t["root_id"] in (2, 11):
            for bi in t.get("bg_items", []):
                bi = dict(bi, tree=t["root_id"])
                items.append(bi)
    items.sort(key=lambda b: b["start"])
    errs = []
    ol = sorted(ours, key=lambda b: b["start"])
    if len(ol) != len(items):
        errs.append("%d block groups, progs lists %d BLOCK_GROUP_ITEMs" % (len(ol), len(items)))
    tree_names = {2: "EXTENT_TREE", 11: "BLOCK_GROUP_TREE"}
    for o, p in zip(ol, items):
        for f in ("start", "length", "used", "flags", "chunk_objectid"):
            if o[f] != p[f]:
                errs.append("block group %d: %s fsctl %d, progs %d" % (p["start"], f, o[f], p[f]))
        if o.get("item_tree") != tree_names[p["tree"]]:
            errs.append("block group %d: item in %s, progs found it in %s" % (p["start"], o.get("item_tree"), tree_names[p["tree"]]))
    n_fx = 0
    if fixture:
        fx = json.load(open(fixture))["block_groups"]["list"]
        fl = sorted(fx, key=lambda b: b["objectid"])
        n_fx = len(fl)
        if len(fl) != len(ol):
            errs.append("%d block groups, fixture JSON lists %d" % (len(ol), len(fl)))
        for o, f in zip(ol, fl):
            fflags = f["flags"]
            if isinstance(fflags, str):
                fflags = int(fflags, 16) if fflags.startswith("0x") else sum(BG_FLAG_NAMES[x] for x in fflags.split("|"))
            for of, ff, fv in (("start", "objectid", f["objectid"]), ("length", "length", f["length"]),
                               ("used", "used", f["used"]), ("flags", "flags", fflags)):
                if o[of] != fv:
                    errs.append("block group %d: %s fsctl %d, fixture %s %r" % (f["objectid"], of, o[of], ff, fv))
            if "tree" in f:  # fixtures-bgt: the tree that holds the item
                want = {"extent": "EXTENT_TREE", "block_group": "BLOCK_GROUP_TREE"}[f["tree"]]
                if o.get("item_tree") != want:
                    errs.append("block group %d: item in %s, fixture says %s" % (f["objectid"], o.get("item_tree"), want))
        fxb = json.load(open(fixture))["block_groups"]
        state = json.load(open(fsctl_path)).get("bg_tree_state", {})
        for ours_f, fx_f in (("in_extent_tree", "in_extent_tree"), ("in_block_group_tree", "in_block_group_tree")):
            if fx_f in fxb and state.get(ours_f) != fxb[fx_f]:
                errs.append("bg_tree_state.%s fsctl %r, fixture %r" % (ours_f, state.get(ours_f), fxb[fx_f]))
    s = "%d block groups (progs %d" % (len(ol), len(items)) + (", fixture %d)" % n_fx if fixture else ")")
    return errs, s


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    cmd = argv[1]
    try:
        if cmd == "super":
            errs, summary = cmd_super(argv[2], argv[3])
        elif cmd == "trees":
            ml = int(argv[5]) if len(argv) > 5 and argv[4] == "--min-level" else None
            errs, summary = cmd_trees(argv[2], argv[3], ml)
        elif cmd == "bgs":
            fx = argv[5] if len(argv) > 5 and argv[4] == "--fixture" else None
            errs, summary = cmd_bgs(argv[2], argv[3], fx)
        else:
            print("unknown subcommand " + cmd, file=sys.stderr)
            return 2
    except ParseError as e:
        print("PARSE ERROR: %s" % e, file=sys.stderr)
        return 1
    if errs:
        for e in errs:
            print("  MISMATCH %s: %s" % (cmd, e), file=sys.stderr)
        return 1
    print("  %s equal: %s" % (cmd, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
