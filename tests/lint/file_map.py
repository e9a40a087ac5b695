#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""File map lint (ctest lint/file-map; issue 11): docs/STYLE.md's file map
(the first fenced block after the "### Layout" heading) names the code as it
is. Every path it names exists, and every .h/.cpp under lib/, convert/,
check/ and cmd/ is named in it.

Map lines: a line starting at column 0 opens a folder ("lib/fs/") and names
its first file after it; an indented line names files of the same folder.
The file tokens of a line are those before the description: words ending in
.h or .cpp, where "name.{h,cpp}" stands for name.h and name.cpp.

Usage: file_map.py SRC_DIR. Prints every missing or unnamed path, exits 1
if any.
"""
import os
import re
import sys

DIRS = ("lib", "convert", "check", "cmd")
FILE = re.compile(r'^[A-Za-z0-9_]+\.(h|cpp|\{h,cpp\})$')


def map_block(text):
    """The lines of the fenced block after the '### Layout' heading."""
    start = text.find("### Layout")
    if start < 0:
        return None
    m = re.search(r'^```[^\n]*\n(.*?)^```', text[start:], re.S | re.M)
    return m.group(1).split("\n") if m else None


def named_paths(lines):
    """(path, line number in the block) of every file the map names."""
    folder = None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        words = line.split()
        if not line[0].isspace():
            folder = words[0].rstrip("/")
            words = words[1:]
        for w in words:
            if not FILE.match(w):
                break  # the description begins
            if w.endswith(".{h,cpp}"):
                stem = w[: -len(".{h,cpp}")]
                yield f"{folder}/{stem}.h", n
                yield f"{folder}/{stem}.cpp", n
            else:
                yield f"{folder}/{w}", n


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    style = os.path.join(root, "docs", "STYLE.md")
    lines = map_block(open(style, encoding="utf-8").read())
    if lines is None:
        print("file map: docs/STYLE.md has no fenced block after '### Layout'")
        return 1
    bad = 0
    named = set()
    for path, n in named_paths(lines):
        named.add(path)
        if not os.path.isfile(os.path.join(root, path)):
            print(f"docs/STYLE.md file map line {n}: {path} does not exist")
            bad += 1
    for d in DIRS:
        for base, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith((".h", ".cpp")):
                    continue
                rel = os.path.relpath(os.path.join(base, f), root)
                if rel not in named:
                    print(f"{rel}: not named in docs/STYLE.md's file map")
                    bad += 1
    if bad:
        print(f"file map: {bad} problems")
        return 1
    print(f"file map: clean ({len(named)} files named, all exist, every .h/.cpp under {'/'.join(DIRS)} named)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
