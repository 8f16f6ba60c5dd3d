#!/bin/bash
# install-deps.sh: installs the Debian packages hlocheck builds and tests with.
# Idempotent: when every package is present it only says so.  As root it
# installs what is missing with apt-get; otherwise it prints the command to run
# and exits 1.  `make test` and `make demo` run it first; `make fuzz` runs it
# with clang as an extra package (install-deps.sh [EXTRA-PACKAGE...]).
set -euo pipefail

packages=(build-essential libopenmpi-dev openmpi-bin libopenblas-dev libcmocka-dev python3-numpy "$@")

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: no dpkg-query (not Debian-like); make sure these are installed:" \
         "${packages[*]}"
    exit 0
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all present (${packages[*]})"
    exit 0
fi

install=(apt-get install -y --no-install-recommends "${missing[@]}")
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing ${missing[*]}; as root, run:" >&2
    echo "  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive ${install[*]}" >&2
    exit 1
fi

echo "install-deps: installing ${missing[*]}"
apt-get update
DEBIAN_FRONTEND=noninteractive "${install[@]}"
