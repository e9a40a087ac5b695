#!/usr/bin/env bash
# 014-reader-log-tree: an image with a log tree waiting for replay (files
# fsynced in the top level and in a subvolume, the image copied before the
# next transaction commit, as after a crash) reads like btrfs-progs: dump-tree
# prints the log root tree after the chunk tree and each subvolume's log tree
# (TREE_LOG ROOT_ITEM <subvol>) after the other trees, with the same blocks and
# keys; dump-super and block-groups agree too, and fsctl warns about the log.
# Regression test: fsctl's dump-tree used to leave the log trees out.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/oracle.sh"
need_mount
cleanup() { mountpoint -q "$T/mnt" && umount "$T/mnt"; return 0; }
trap cleanup EXIT

mkimg "$T/a.img" 256M -n 4096
mkdir -p "$T/mnt"
# commit=300: no transaction commit between the fsyncs and the copy.
mount -o loop,commit=300 "$T/a.img" "$T/mnt"
btrfs -q subvolume create "$T/mnt/sv" > /dev/null
sync
python3 - "$T/mnt" <<'PY'
import os, sys
dirs = [os.path.join(sys.argv[1], sub, "logged") for sub in ("", "sv")]
for d in dirs:
    os.makedirs(d, exist_ok=True)
os.sync()  # directories committed: fsync of new files in them needs no full commit
for d in dirs:
    for i in range(120):
        fd = os.open(os.path.join(d, "f%04d" % i), os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, bytes([i & 0xFF]) * (100 + 40 * i))
        os.fsync(fd)
        os.close(fd)
PY
cp --sparse=always "$T/a.img" "$T/crash.img"
umount "$T/mnt"

btrfs inspect-internal dump-super "$T/crash.img" | grep_q '^log_root[[:space:]]*[1-9]' ||
  skip "the copy has no log tree (a commit came first); cannot test here"
rc=0
oracle_compare log-tree "$T/crash.img" || rc=1
python3 - "$T/oracle-log-tree/fsctl.tree.json" <<'PY' || rc=1
import json, sys
t = json.load(open(sys.argv[1]))["trees"]
titles = [x["title"] for x in t]
logs = [x for x in titles if x.startswith("TREE_LOG tree key")]
assert titles[2] == "log root tree", titles
# Usually the log trees of subvolumes 5 and 256; the kernel may still turn an
# fsync into a full commit, which leaves fewer. progs' list was compared above.
assert logs, "no TREE_LOG tree dumped: %s" % titles
print("  log trees: " + ", ".join(logs))
PY
grep -q "log tree at .* needs replay" "$T/oracle-log-tree/fsctl.tree.err" || { echo "no log tree warning"; rc=1; }
[ $rc -eq 0 ] || fail "fsctl differs from btrfs-progs on an image with a log tree"
echo ok
