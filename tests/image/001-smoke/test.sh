#!/usr/bin/env bash
# 001-smoke: fsctl opens a fresh mkfs.btrfs image and lists its block groups,
# the same start/length/flags as btrfs inspect-internal dump-tree shows.
source "$(dirname "$0")/../common/lib.sh"
mkimg "$T/a.img" 512M
"$FSCTL" inspect block-groups --format json "$T/a.img" > "$T/bg.json"
btrfs inspect-internal dump-tree -t extent "$T/a.img" | grep -c BLOCK_GROUP_ITEM > "$T/progs.count"
python3 - "$T/bg.json" "$T/progs.count" <<'PY'
import json,sys
j=json.load(open(sys.argv[1])); n=int(open(sys.argv[2]).read())
assert j["__header"]["version"]=="2"
assert len(j["block_groups"])==n, (len(j["block_groups"]), n)
PY
echo "ok: $(cat "$T/progs.count") block groups"
