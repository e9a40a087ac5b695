#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Validates fsctl JSON documents against the schemas of docs/json/.

usage: validate_json.py [--schemas DIR] [--expect report|error] FILE...
       (FILE "-" reads standard input)

Each FILE must hold exactly one JSON document (what `fsctl --format json`
prints on standard output). Its schema is chosen from the document: the
error document (an "error" member and no report: error.schema.json), else
the command of its "__header" ("qgroup show" -> qgroup-show.schema.json).
--expect says which of the two it must be. The schemas' references to
common.schema.json are resolved here, so any python3-jsonschema >= 4 works
(Debian 12's 4.10 included). Exit 0 when every document is valid, 1 when
one is not (the errors are printed), 2 on a usage problem.
"""
import argparse
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    sys.stderr.write("validate_json.py: python3-jsonschema is not installed (apt install python3-jsonschema)\n")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMAS = os.path.join(HERE, "..", "..", "docs", "json")
COMMON_REF = "common.schema.json#/$defs/"


def inline_common(node, common_defs, used):
    """Rewrites refs to common.schema.json#/$defs/X into #/$defs/common.X."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str) and v.startswith(COMMON_REF):
                name = v[len(COMMON_REF):]
                if name not in common_defs:
                    raise SystemExit(f"validate_json.py: unknown definition {v}")
                used.add(name)
                out[k] = "#/$defs/common." + name
            else:
                out[k] = inline_common(v, common_defs, used)
        return out
    if isinstance(node, list):
        return [inline_common(v, common_defs, used) for v in node]
    return node


def common_local(node):
    """Inside common's own $defs: #/$defs/X and common.schema.json#/$defs/X
    (both spellings occur) -> #/$defs/common.X."""
    def local(v):
        for prefix in ("#/$defs/", COMMON_REF):
            if v.startswith(prefix):
                return "#/$defs/common." + v[len(prefix):]
        return v
    if isinstance(node, dict):
        return {k: (local(v) if k == "$ref" and isinstance(v, str) else common_local(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [common_local(v) for v in node]
    return node


def load_schema(schemas, name):
    with open(os.path.join(schemas, "common.schema.json")) as f:
        common = json.load(f)["$defs"]
    with open(os.path.join(schemas, name)) as f:
        schema = json.load(f)
    used = set()
    schema = inline_common(schema, common, used)
    defs = schema.setdefault("$defs", {})
    for name_, d in common.items():  # every definition: they refer to each other
        defs["common." + name_] = common_local(d)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def schema_name(doc):
    if not isinstance(doc, dict):
        return None, "not a JSON object"
    if "error" in doc and "trees" not in doc:
        return "error.schema.json", None
    cmd = doc.get("__header", {}).get("command") if isinstance(doc.get("__header"), dict) else None
    if not isinstance(cmd, str) or not cmd:
        return None, "no __header.command"
    return cmd.replace(" ", "-") + ".schema.json", None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--schemas", default=DEFAULT_SCHEMAS)
    ap.add_argument("--expect", choices=["report", "error"])
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    bad = 0
    for path in a.files:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            print(f"{path}: not one JSON document: {e} (first bytes: {text[:80]!r})")
            bad += 1
            continue
        name, why = schema_name(doc)
        if not name:
            print(f"{path}: {why}")
            bad += 1
            continue
        kind = "error" if name == "error.schema.json" else "report"
        if a.expect and kind != a.expect:
            print(f"{path}: expected {a.expect} document, got {kind}" + (f": {doc['error'].get('message')}" if kind == "error" else ""))
            bad += 1
            continue
        if not os.path.exists(os.path.join(a.schemas, name)):
            print(f"{path}: no schema {name} in {a.schemas}")
            bad += 1
            continue
        v = jsonschema.Draft202012Validator(load_schema(a.schemas, name))
        errs = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errs[:20]:
            where = "/".join(str(p) for p in e.absolute_path) or "(top)"
            print(f"{path}: {name}: at {where}: {e.message[:300]}")
        if errs:
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
