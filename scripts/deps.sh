#!/usr/bin/env bash
# Installs what vramdoc needs to build and test, from Debian / Ubuntu packages, when missing.
# Usage: scripts/deps.sh [--test]   (--test adds what only the test suite needs)
set -euo pipefail
packages=(cmake g++ make ninja-build nlohmann-json3-dev libcli11-dev binutils)
if [[ ${1:-} == --test ]]; then packages+=(libgtest-dev tmux python3 curl procps chromium); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "vramdoc: installing ${missing[*]}" >&2
  sudo=""; [[ $(id -u) == 0 ]] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
