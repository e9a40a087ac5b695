#!/usr/bin/env bash
# 040-bad-non-utf8-names: btrfs names and labels are bytes, not UTF-8. A file
# name with byte 0xff, a lone continuation byte and a truncated sequence, and a
# label with 0xfe (all legal on disk). Found by fuzz_tree_block: JSON output
# threw nlohmann's type_error 316 ("ERROR: internal error", exit 3, half a
# document). Proves: dump-tree and dump-super --format json exit 0 and print
# valid JSON in which the bad bytes read \xNN and valid UTF-8 stays as is.
source "$(dirname "$0")/../common/lib.sh"
source "$(dirname "$0")/../common/bad_input.sh"
mkdir -p "$T/root"
touch "$T/root/"$'bad\xffname' "$T/root/"$'cont\x80x' "$T/root/"$'cut\xe2\x82' "$T/root/"$'ok-\xc3\xa9t\xc3\xa9'
img="$T/u.img"
mkimg "$img" 256M -L $'lab\xfeel' -r "$T/root"
snap "$img"
expect 0 "$FSCTL" inspect dump-tree --format json -t fs "$img"
python3 - "$T/stdout" <<'PY'
import json, sys
j = json.load(open(sys.argv[1], encoding="utf-8"))
names = set()
for b in j["trees"][0]["blocks"]:
    for it in b.get("items", []):
        d = it["data"]
        for e in d.get("entries", []) + d.get("refs", []):
            names.add(e["name"])
want = {"bad\\xffname", "cont\\x80x", "cut\\xe2\\x82", "ok-\u00e9t\u00e9"}
assert want <= names, (want - names, names)
PY
expect 0 "$FSCTL" inspect dump-super --format json "$img"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); l=j["devices"][0]["copies"][0]["superblock"]["label"]; assert l=="lab\\xfeel", l' "$T/stdout"
expect 0 "$FSCTL" inspect dump-tree "$img"
unchanged "$img"
