#!/usr/bin/env bash
# The image builder ships with the package (so `playground images build` works from a wheel); this path
# stays for scripts and habits: it runs `playground images build` from this checkout, which reads each
# pack's recipe (DockerSpec.image_packages) and calls resources/images/build.sh with it.
#
#   bash packaging/images/build.sh [--force] [PACK...]     # default: bash node
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
py="$root/.venv/bin/python"
[ -x "$py" ] || py=python3
cd "$root"
exec "$py" -m playground.cli images build "$@"
