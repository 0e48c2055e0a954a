#!/usr/bin/env bash
# The whole test suite: set-up (idempotent), lint, types, every test for real.
# This is the README's test command and exactly what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."

bash packaging/setup.sh --dev

# Tools some tests check the project with (the desktop entry validator), installed if missing.
if ! command -v desktop-file-validate >/dev/null && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq desktop-file-utils >/dev/null \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq desktop-file-utils >/dev/null; }
fi

# The Docker tier: start a daemon only if none answers; stop it at exit only if this script started it.
# Then build its test images from Debian packages (an existing image is reused): one per pack with a
# Docker tier, named by the packs themselves (DockerSpec.image_packages), so a new language needs no line here.
mapfile -t IMAGES < <(.venv/bin/python -c 'from playground.packs import ALL_PACKS
print("\n".join(p.name for p in ALL_PACKS if p.docker is not None and p.docker.image_packages))')
if [ "$(id -u)" = 0 ] || timeout 10 docker info >/dev/null 2>&1; then
    bash packaging/docker_daemon.sh start
    trap 'bash packaging/docker_daemon.sh stop' EXIT
    bash packaging/images/build.sh "${IMAGES[@]}"
fi

echo "== ruff" >&2
.venv/bin/ruff check playground backends tests bench packaging
echo "== mypy --strict (core, backends)" >&2
.venv/bin/mypy --strict -p playground.core -p backends

echo "== pytest" >&2
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" = 5 ]; then
    echo "pytest collected no tests: that is a failure, not a pass" >&2
    exit 1
fi

# The Docker tier once more, on rootful Podman with Docker absent: a full run as root only (no pytest
# arguments: a selection stays a selection). Podman gets the same images; the dockerd this script started
# is stopped, and the tests run where no Docker socket is visible (packaging/podman.sh without-docker),
# so detection has to find Podman by itself. test_podman.py checks it did.
if [ "$(id -u)" = 0 ] && [ $# = 0 ]; then
    echo "== pytest tests/integration/docker on Podman (Docker absent)" >&2
    podman_start=$SECONDS
    bash packaging/podman.sh start
    trap 'bash packaging/podman.sh stop; bash packaging/docker_daemon.sh stop' EXIT
    bash packaging/podman.sh load "${IMAGES[@]}"
    bash packaging/docker_daemon.sh stop
    set +e
    bash packaging/podman.sh without-docker env PLAYGROUND_TEST_EXPECT_ENGINE=podman \
        .venv/bin/python -m pytest tests/integration/docker
    podman_status=$?
    set -e
    echo "== the Podman pass took $((SECONDS - podman_start))s" >&2
    [ "$status" != 0 ] || status=$podman_status
fi
exit "$status"
