#!/bin/bash
# install-deps.sh: installs the Debian packages hlocheck builds and tests with.
# Idempotent: when every package is present it only says so.  As root it
# installs what is missing with apt-get; otherwise it prints the command to run
# and exits 1.  `make test` and `make demo` run it first; `make fuzz` runs it
# with clang as an extra package (install-deps.sh [EXTRA-PACKAGE...]);
# `install-deps.sh xla` sets up the XLA:CPU environment (below).
set -euo pipefail

# install-deps.sh xla: the XLA:CPU environment instead (issue 23's reference):
# a virtual environment at $XLA_VENV (default build/xla-venv, never
# committed) holding the pinned jax and jaxlib from PyPI.  Present: says so.
# PyPI out of reach: one line saying so, exit 1.  The C build never needs it.
if [ "${1:-}" = xla ]; then
    root=$(cd "$(dirname "$0")/.." && pwd)
    venv=${XLA_VENV:-$root/build/xla-venv}
    pins=(jax==0.10.2 jaxlib==0.10.2)
    have() { "$venv/bin/python" -c 'import jax, jaxlib; assert jax.__version__ == jaxlib.__version__ == "0.10.2"' \
        >/dev/null 2>&1; }
    if have; then
        echo "install-deps: the XLA environment is present (jax and jaxlib 0.10.2 in $venv)"
        exit 0
    fi
    echo "install-deps: installing ${pins[*]} into $venv"
    mkdir -p "$(dirname "$venv")"
    if ! python3 -m venv "$venv" >"$venv.log" 2>&1 ||
        ! "$venv/bin/pip" install --disable-pip-version-check --timeout 30 --retries 1 -q "${pins[@]}" \
            >>"$venv.log" 2>&1 || ! have; then
        echo "install-deps: cannot install ${pins[*]} from PyPI into $venv (see $venv.log): the XLA cases cannot run" >&2
        exit 1
    fi
    echo "install-deps: the XLA environment is ready (jax and jaxlib 0.10.2 in $venv)"
    exit 0
fi

packages=(build-essential libopenmpi-dev openmpi-bin libopenblas-dev libcmocka-dev python3-numpy iproute2 graphviz
          libprotobuf-c-dev protobuf-c-compiler "$@")

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
