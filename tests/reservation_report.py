#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Reservation report of the test suite (issue 4's acceptance, DESIGN.md
invariant 4): reads the lines every committed transaction of the tests
appended to the log (cmd/env_hooks.h: LABEL PID RESERVED
USED, bytes), and fails when
  - a transaction used more than it reserved (or committed without one), or
  - the median reserved/used over the operations exceeds MAX_MEDIAN (judged when the
    log holds a whole run: at least MIN_OPERATIONS operations),
where an operation is one process (a command, or one test tool run: its
transactions summed; a tree_torture transaction is its own operation, as
each is planned and reserved on its own). Prints per label the operations,
the median, min and max ratio, so what each kind of operation reserves
stays visible.

Usage: reservation_report.py LOG [--reset]   (--reset: empty LOG and exit)
"""
import os
import statistics
import sys

# The median is judged on a whole run of the suite (about 370 operations);
# a subset run by ctest -R has another mix of operations.
MIN_OPERATIONS = 200
# Issue 11: the median reserved/used per operation stays at or below 1.5
# (a whole ASan run on 2026-12-01: 1.29 over 485 operations; convert 1.17,
# qgroup_verify 1.25, balance 1.80, tree_torture 1.59).
MAX_MEDIAN = 1.5


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    log = sys.argv[1]
    if "--reset" in sys.argv[2:]:
        if os.path.exists(log):
            os.remove(log)
        return 0
    if not os.path.exists(log):
        print(f"PASS: no reservation log at {log}: the tests that ran committed no transaction")
        return 0
    txns, bad = [], []
    with open(log) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) != 4:
                bad.append(f"line {n}: malformed: {line.rstrip()}")
                continue
            label, pid, reserved, used = parts[0], parts[1], int(parts[2]), int(parts[3])
            txns.append((label, pid, reserved, used))
            if used > reserved:
                bad.append(f"line {n}: {label} (pid {pid}) used {used} bytes > reserved {reserved}")
    ops = {}
    for label, pid, reserved, used in txns:
        key = (label, pid, len(ops)) if label == "tree_torture" else (label, pid)
        r, u = ops.get(key, (0, 0))
        ops[key] = (r + reserved, u + used)
    ratios = {}
    for (label, *_), (r, u) in ops.items():
        if u > 0:
            ratios.setdefault(label, []).append(r / u)
    everything = [x for v in ratios.values() for x in v]
    print(f"reservation: {len(txns)} committed transactions in {len(ops)} operations")
    print(f"{'operation':<28} {'ops':>5} {'median':>7} {'min':>6} {'max':>6}")
    for label in sorted(ratios):
        v = ratios[label]
        print(f"{label:<28} {len(v):>5} {statistics.median(v):>7.2f} {min(v):>6.2f} {max(v):>6.2f}")
    median = statistics.median(everything) if everything else 0.0
    print(f"{'all':<28} {len(everything):>5} {median:>7.2f} {min(everything, default=0):>6.2f} {max(everything, default=0):>6.2f}")
    for b in bad[:20]:
        print("FAIL:", b)
    if bad:
        return 1
    if len(everything) < MIN_OPERATIONS:
        print(f"PASS: used <= reserved in every transaction; median {median:.2f} not judged: "
              f"{len(everything)} operations, fewer than a whole run's {MIN_OPERATIONS} (ctest -R)")
        return 0
    if median > MAX_MEDIAN:
        print(f"FAIL: median reserved/used {median:.2f} > {MAX_MEDIAN}")
        return 1
    print("PASS: used <= reserved in every transaction; median reserved/used", f"{median:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
