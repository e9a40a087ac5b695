#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Function length lint (ctest lint/function-length; issue 11): no function
under lib/, convert/ or check/ is longer than MAX_LINES lines unless its
comment (the comment block right above its definition) says why, with a
line containing "Long:" (e.g. "// Long: one pass over the leaf keeps the
cursor state in locals"). Long functions hide steps that deserve names.

A function is found as a line that ends with "{" at namespace or class
indentation, looks like a definition (a name followed by "(" ... ")"), and
is not a control statement, namespace, class, struct, enum or lambda; its
length runs to the matching "}" (braces in strings, character literals and
comments are ignored).

Usage: function_length.py SRC_DIR [--list]   (--list: print every function
over the limit with its length, marked or not). Exits 1 on an unmarked one.
"""
import os
import re
import sys

MAX_LINES = 100
DIRS = ("lib", "convert", "check")
NOT_FUNCTION = re.compile(r'^\s*(if|for|while|switch|do|else|namespace|class|struct|enum|union|try|catch|return|case)\b')
DEFINITION = re.compile(r'^( {0,4})[A-Za-z_~][^;=]*\b([A-Za-z_~][A-Za-z_0-9:<>~]*)\s*\([^;]*\)[^;]*\{\s*(//.*)?$')


def strip_literals(line, in_comment):
    """The line without string/char literals and comments; and whether a
    block comment continues past it."""
    out, i, n = [], 0, len(line)
    while i < n:
        if in_comment:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out), True
            i, in_comment = j + 2, False
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            in_comment, i = True, i + 2
            continue
        if c in "\"'":
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out), in_comment


def functions(lines):
    """(name, first line index, length) of each definition found."""
    clean, in_comment = [], False
    for l in lines:
        s, in_comment = strip_literals(l, in_comment)
        clean.append(s)
    i = 0
    while i < len(lines):
        s = clean[i]
        # A signature may span lines: join with up to 3 lines before when
        # this line opens a body at low indentation.
        m = DEFINITION.match(s) if not NOT_FUNCTION.match(s) else None
        if not m and s.rstrip().endswith("{") and re.match(r'^( {0,4})\S', s) and not NOT_FUNCTION.match(s):
            for back in (1, 2, 3):
                if i - back < 0:
                    break
                joined = " ".join(x.strip() for x in clean[i - back:i + 1])
                prefix = re.match(r'^( *)', clean[i - back]).group(1)
                if len(prefix) <= 4 and not NOT_FUNCTION.match(clean[i - back]):
                    m = DEFINITION.match(prefix + joined)
                    if m:
                        break
        if m and "[" not in s.split("(")[0]:
            depth, j = 0, i
            while j < len(lines):
                depth += clean[j].count("{") - clean[j].count("}")
                if depth <= 0 and j >= i:
                    break
                j += 1
            yield m.group(2), i, j - i + 1
            i = j + 1
            continue
        i += 1


def marked(lines, start):
    """True when the comment block above line `start` (or its signature's
    first line) has a "Long:" line."""
    k = start - 1
    # Skip the signature's earlier lines.
    while k >= 0 and lines[k].strip() and not lines[k].strip().startswith("//") and k > start - 4:
        k -= 1
    while k >= 0 and lines[k].strip().startswith("//"):
        if "Long:" in lines[k]:
            return True
        k -= 1
    return False


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    root, listing = sys.argv[1], "--list" in sys.argv[2:]
    bad = 0
    for d in DIRS:
        for base, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith(".cpp"):
                    continue
                path = os.path.join(base, f)
                rel = os.path.relpath(path, root)
                lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
                for name, start, length in functions(lines):
                    if length <= MAX_LINES:
                        continue
                    ok = marked(lines, start)
                    if listing or not ok:
                        print(f"{rel}:{start + 1}: {name}: {length} lines{'' if ok else ' (no Long: comment)'}")
                    bad += not ok
    if bad:
        print(f"function length: {bad} functions over {MAX_LINES} lines without a 'Long:' comment saying why")
        return 1
    print(f"function length: clean (every function under {'/'.join(DIRS)} is at most {MAX_LINES} lines or says why)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
