#!/usr/bin/env bash
# Installs what fsctl needs to build and test on a fresh Debian 12 machine
# (run as root; a no-op when everything is there).
set -euo pipefail
PKGS=(g++ cmake make ninja-build pkg-config clang libclang-rt-14-dev
      libcli11-dev nlohmann-json3-dev libzstd-dev liblz4-dev doctest-dev libexpected-dev
      libxxhash-dev libsodium-dev libisal-dev
      btrfs-progs zstd xz-utils python3 python3-jsonschema util-linux kmod groff-base tmux)
missing=()
for p in "${PKGS[@]}"; do
  grep -q "install ok installed" < <(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages ${missing[*]}; run as root to install them" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
