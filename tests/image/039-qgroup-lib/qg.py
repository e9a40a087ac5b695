#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Helpers shared by the qgroup image tests (030-034): turn the kernel's truth
# (`btrfs qgroup show --raw -pcre` after `btrfs quota rescan -w`, or a
# fixture's quota.kernel_after_rescan) into one normalized "truth" JSON, and
# compare `fsctl qgroup verify/show --format json` with it.
# No test.sh here: ctest does not run this folder.
#
# truth JSON: {"qgroups": {"0/256": {"rfer", "excl", "max_rfer", "max_excl",
#              "parents": [...], "children": [...], "path"}}}
import argparse
import json
import sys


def _num(v):
    if v is None or v == "none":
        return None
    return int(v)


def _path(p):
    # progs JSON prints "" for the top level, text prints "<toplevel>"; a
    # subvolume being deleted is "<stale>" in progs 6.2 and "<under
    # deletion>" from progs 6.x on (fsctl prints the newer label); progs 6.7+
    # prints "<squota space holder>" for such a simple-quota qgroup that
    # still holds bytes (fsctl too).
    if p in ("<under deletion>", "<squota space holder>"):
        return "<stale>"
    return "<toplevel>" if p in ("", "<toplevel>") else p


def truth_from_progs_text(path):
    """`btrfs qgroup show --raw -pcre` text (btrfs-progs 6.2; its --format json
    aborts on qgroups with limits)."""
    out = {}
    lines = open(path).read().splitlines()
    hdr = [i for i, l in enumerate(lines) if l.startswith("Qgroupid")]
    if not hdr or "Parent" not in lines[hdr[0]] or "Max exclusive" not in lines[hdr[0]]:
        raise SystemExit(f"{path}: not the output of `btrfs qgroup show --raw -pcre`")
    for l in lines[hdr[0] + 2:]:
        if not l.strip():
            continue
        f = l.split(None, 7)
        ids = lambda x: [] if x == "-" else sorted(x.split(","))
        out[f[0]] = {"rfer": int(f[1]), "excl": int(f[2]), "max_rfer": _num(f[3]), "max_excl": _num(f[4]),
                     "parents": ids(f[5]), "children": ids(f[6]), "path": _path(f[7].strip() if len(f) > 7 else "")}
    return {"qgroups": out}


def truth_from_progs_json(path):
    """`btrfs --format json qgroup show --raw -pcre` (btrfs-progs 6.2)."""
    j = json.load(open(path))
    out = {}
    for q in j["qgroup-show"]:
        out[q["qgroupid"]] = {
            "rfer": int(q["referenced"]), "excl": int(q["exclusive"]),
            "max_rfer": _num(q.get("max_referenced")), "max_excl": _num(q.get("max_exclusive")),
            "parents": sorted(q.get("parents", [])), "children": sorted(q.get("children", [])),
            "path": _path(q.get("path", "")),
        }
    return {"qgroups": out}


def truth_from_fixture(path, ondisk=False):
    """quota.kernel_after_rescan; with ondisk=True the numbers are those of the
    QGROUP_INFO items (quota.ondisk, what `show` must print) instead."""
    j = json.load(open(path))
    out = {}
    info = j["quota"]["ondisk"]["info"]
    for q in j["quota"]["kernel_after_rescan"]:
        n = info[q["qgroupid"]] if ondisk else q
        out[q["qgroupid"]] = {
            "rfer": n["rfer"], "excl": n["excl"], "max_rfer": q["max_rfer"], "max_excl": q["max_excl"],
            "parents": sorted(q["parents"]), "children": sorted(q["children"]), "path": _path(q["path"]),
        }
    return {"qgroups": out}


def level(qgid):
    return int(qgid.split("/")[0])


def check_computed(verify, truth, exclude=(), extra_ok=(), only=None):
    """Every qgroup of the truth (minus `exclude`) is a verify row whose computed
    rfer/excl equal the truth and whose compressed twins equal the plain numbers.
    Rows not in the truth must be listed in `extra_ok`. Returns error strings."""
    errs = []
    rows = {r["qgroupid"]: r for r in verify["qgroups"]}
    t = truth["qgroups"]
    # Simple quotas: the kernel never updates the compressed twins (they stay 0).
    simple = verify.get("status", {}).get("mode") == "simple"
    for q, want in t.items():
        if q in exclude or (only is not None and q not in only):
            continue
        r = rows.get(q)
        if r is None:
            errs.append(f"{q}: in the kernel's list, not in fsctl verify")
            continue
        c = r["computed"]
        if c["referenced"] != want["rfer"] or c["exclusive"] != want["excl"]:
            errs.append(f"{q}: computed rfer {c['referenced']} excl {c['exclusive']}, kernel rfer {want['rfer']} excl {want['excl']}")
        if simple:
            if c["referenced_compressed"] != 0 or c["exclusive_compressed"] != 0:
                errs.append(f"{q}: simple quotas: compressed twins not 0: {c}")
        elif c["referenced_compressed"] != c["referenced"] or c["exclusive_compressed"] != c["exclusive"]:
            errs.append(f"{q}: compressed twins differ from plain numbers: {c}")
    for q in rows:
        if q not in t and q not in extra_ok and q not in exclude:
            errs.append(f"{q}: fsctl verify reports it, the kernel does not know it ({rows[q]})")
    return errs


def check_all_ok(verify):
    errs = []
    if not verify.get("quota_enabled"):
        errs.append("quota_enabled is not true")
    for r in verify["qgroups"]:
        if r["status"] != "ok":
            errs.append(f"{r['qgroupid']}: status {r['status']} (computed {r['computed']}, on-disk {r['ondisk']})")
    if verify.get("mismatches") != 0 or verify.get("ok") is not True:
        errs.append(f"mismatches {verify.get('mismatches')}, ok {verify.get('ok')}")
    if verify.get("verified") != len(verify["qgroups"]):
        errs.append(f"verified {verify.get('verified')} != {len(verify['qgroups'])} rows")
    return errs


def check_show(show, truth, ondisk=None):
    """`fsctl qgroup show --format json` against the truth (numbers, limits,
    relations, level-0 paths) and, when given, a fixture's quota.ondisk
    (all four numbers of every QGROUP_INFO item)."""
    errs = []
    rows = {r["qgroupid"]: r for r in show["qgroups"]}
    t = truth["qgroups"]
    if set(rows) != set(t):
        errs.append(f"qgroup sets differ: fsctl only {sorted(set(rows) - set(t))}, kernel only {sorted(set(t) - set(rows))}")
    for q, want in t.items():
        r = rows.get(q)
        if r is None:
            continue
        got = {"rfer": r["referenced"], "excl": r["exclusive"], "max_rfer": r["max_referenced"],
               "max_excl": r["max_exclusive"], "parents": sorted(r["parents"]), "children": sorted(r["children"])}
        for k, v in got.items():
            if want[k] != v:
                errs.append(f"{q}: {k} fsctl {v}, kernel {want[k]}")
        # progs prints "<N member qgroups>" for level > 0 with N counted from
        # the parents list (a progs quirk); only level-0 paths are compared.
        # fsctl's JSON: "" for the top level, null without a path (a
        # subvolume under deletion or none: "<stale>" here).
        if level(q) == 0 and _path("<stale>" if r["path"] is None else r["path"]) != want["path"]:
            errs.append(f"{q}: path fsctl {r['path']!r}, kernel {want['path']!r}")
    if ondisk is not None:
        for q, info in ondisk["info"].items():
            r = rows.get(q)
            if r is None:
                errs.append(f"{q}: QGROUP_INFO on disk, not in fsctl show")
                continue
            for f, k in (("rfer", "referenced"), ("rfer_cmpr", "referenced_compressed"),
                         ("excl", "exclusive"), ("excl_cmpr", "exclusive_compressed")):
                if r[k] != info[f]:
                    errs.append(f"{q}: {k} fsctl {r[k]}, dump-tree {info[f]}")
    return errs


def _load(p):
    return json.load(open(p))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("truth-from-progs"); a.add_argument("show_json")
    a = sub.add_parser("truth-from-progs-text"); a.add_argument("show_txt")
    a = sub.add_parser("truth-from-fixture"); a.add_argument("fixture_json"); a.add_argument("--ondisk", action="store_true")
    a = sub.add_parser("check-computed"); a.add_argument("verify_json"); a.add_argument("truth_json")
    a.add_argument("--exclude", default=""); a.add_argument("--extra-ok", default="")
    a = sub.add_parser("check-ok"); a.add_argument("verify_json")
    a = sub.add_parser("check-show"); a.add_argument("show_json"); a.add_argument("truth_json")
    a.add_argument("--fixture", default=None)
    args = ap.parse_args()
    split = lambda s: [x for x in s.split(",") if x]
    if args.cmd == "truth-from-progs":
        json.dump(truth_from_progs_json(args.show_json), sys.stdout, indent=1)
        return 0
    if args.cmd == "truth-from-progs-text":
        json.dump(truth_from_progs_text(args.show_txt), sys.stdout, indent=1)
        return 0
    if args.cmd == "truth-from-fixture":
        json.dump(truth_from_fixture(args.fixture_json, args.ondisk), sys.stdout, indent=1)
        return 0
    if args.cmd == "check-computed":
        errs = check_computed(_load(args.verify_json), _load(args.truth_json), split(args.exclude), split(args.extra_ok))
    elif args.cmd == "check-ok":
        errs = check_all_ok(_load(args.verify_json))
    else:
        ondisk = _load(args.fixture)["quota"]["ondisk"] if args.fixture else None
        errs = check_show(_load(args.show_json), _load(args.truth_json), ondisk)
    for e in errs[:50]:
        print("  " + e, file=sys.stderr)
    if len(errs) > 50:
        print(f"  ... and {len(errs) - 50} more", file=sys.stderr)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
