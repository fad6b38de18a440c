#!/usr/bin/env bash
# Installs what vramdoc needs to build and test, from Debian / Ubuntu packages, when missing.
# Usage: scripts/deps.sh [--test]   (--test adds what only the test suite needs)
set -euo pipefail
packages=(cmake g++ make ninja-build nlohmann-json3-dev libcli11-dev binutils libcrypt-dev libssl-dev)
optional=()  # tests that need these skip themselves (exit 77) where they cannot be installed
if [[ ${1:-} == --test ]]; then packages+=(libgtest-dev tmux python3 python3-venv python3-pytest python3-torch python3-torchvision curl procps openssl); optional+=(chromium); fi
sudo=""; [[ $(id -u) == 0 ]] || sudo=sudo
updated=0
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "vramdoc: installing ${missing[*]}" >&2
  $sudo apt-get update -qq && updated=1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for p in "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
  ((updated)) || { $sudo apt-get update -qq && updated=1; } || true
  # Ubuntu's chromium is a snap wrapper that cannot install everywhere: a test that needs it skips.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
    echo "vramdoc: could not install $p (optional; the tests that need it will be skipped)" >&2
done
