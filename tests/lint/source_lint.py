#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Source lint (ctest lint/source): kinds of fault that were found once and
must not come back, checked over the whole tree rather than per instance.

  hex-decimal   a "0x" literal joined to a number (+ or <<) prints the number
                in decimal after 0x (issue 12: "(0x4096)" for 0x1000); hex goes
                through format::hex().
  getenv        the library reads no environment variable (getenv,
                secure_getenv) under lib/, check/ or convert/: test and
                profiling hooks are fs::OpenOptions (a device wrapper, a
                commit observer) that cmd/ or a test fills (issue 11).
  disk-cast     a reinterpret_cast outside lib/format (issue 11): item and
                block bytes are read and written only through the typed codecs
                of lib/format (lib/format/codecs.h), where a short item is
                corruption decided in one place. Byte/char views and pointer
                alignment have lib/base/bytes.h. The exceptions are listed in
                DISK_CAST_ALLOWED, each with its reason.
  progs-check   an image test runs a btrfs-progs named by path or variable
                as `X check` without "$CHECK_RETRY" before it: btrfs check
                must go through tests/tools/check_retry.sh (plain `btrfs`
                does, through tests/tools/progs-shim in PATH), which retries
                the mount status race with tests running beside it (CI, stop
                23: "could not check mount status: No such device").

Usage: source_lint.py SRC_DIR. Prints every offending line, exits 1 if any.
"""
import os
import re
import sys

# Paths where disk-cast is allowed, and why.
DISK_CAST_ALLOWED = (
    # The on-disk structs and their codecs: the one place that overlays bytes.
    "lib/format/",
)

RULES = [
    ("hex-decimal", re.compile(r'0x"\s*(\+|<<)'), ("lib", "cmd", "check", "convert", "tests/tools"), ()),
    ("getenv", re.compile(r'\b(secure_)?getenv\b'), ("lib", "check", "convert"), ()),
    ("disk-cast", re.compile(r'\breinterpret_cast\s*<'), ("lib", "cmd", "check", "convert"), DISK_CAST_ALLOWED),
]


# `WORD check --...` in a shell line; WORD is the command that runs check.
PROGS_CHECK = re.compile(r'(?P<cmd>"?(\$\{?\w+\}?|/[^\s"]*)[^\s"]*"?)\s+check\s+--(readonly|qgroup-report)')
PROGS_CHECK_OK = ("btrfs", '"$FSCTL"', "$FSCTL", '"$FSCTL_REAL"')


def progs_check_findings(root):
    for path in sorted(sources(root, ("tests/image",), (".sh",))):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                if line.lstrip().startswith("#"):
                    continue
                for m in PROGS_CHECK.finditer(line):
                    cmd = m.group("cmd")
                    before = line[:m.start()].rstrip()
                    if line[:m.start()].count('"') % 2:
                        continue  # inside a quoted string: a message, not a command
                    if cmd in PROGS_CHECK_OK or before.endswith('"$CHECK_RETRY"'):
                        continue
                    yield f"{rel}:{n}: progs-check: {line.strip()}"


def sources(root, dirs, exts=(".cpp", ".h")):
    for d in dirs:
        for base, _, files in os.walk(os.path.join(root, d)):
            for f in files:
                if f.endswith(exts):
                    yield os.path.join(base, f)


def main():
    root = sys.argv[1]
    bad = 0
    for name, rx, dirs, allowed in RULES:
        for path in sorted(sources(root, dirs)):
            rel = os.path.relpath(path, root)
            if any(rel.startswith(a) for a in allowed):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    if line.lstrip().startswith("//"):
                        continue
                    if rx.search(line):
                        print(f"{rel}:{n}: {name}: {line.strip()}")
                        bad += 1
    for finding in progs_check_findings(root):
        print(finding)
        bad += 1
    if bad:
        print(f"source lint: {bad} finding(s)")
        return 1
    print("source lint: clean (" + ", ".join([r[0] for r in RULES] + ["progs-check"]) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
