"""A private TLS ``dockerd`` for the remote-engine tests (``tlsdaemon``), started once per test session.

It needs root (dockerd), the ``dockerd`` and ``openssl`` binaries and a local
daemon holding ``playground-bash:local`` (``packaging/images/build.sh``).
Without them the tests are skipped with the reason; under ``CI=true`` that
is a failure instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from backends.docker.detect import DaemonProbe
from backends.docker.engine import Engine
from backends.docker.profile import LABEL

from .tlsdaemon import TLSDaemon, start_tls_daemon

#: The image the remote tests run (copied from the local daemon).
IMAGE = "playground-bash:local"


def _skip_or_fail(message: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def tls_daemon() -> Iterator[TLSDaemon]:
    """The running daemon with ``IMAGE`` loaded; stopped and its files removed after the session."""
    if os.geteuid() != 0:
        _skip_or_fail("a second dockerd needs root")
    for tool in ("dockerd", "openssl"):
        if shutil.which(tool) is None:
            _skip_or_fail(f"{tool} is not installed (bash packaging/docker_daemon.sh start installs docker.io)")
    local = DaemonProbe(timeout=3.0).get()
    if local.endpoint is None or local.endpoint.socket_path is None:
        _skip_or_fail(f"no local daemon to copy {IMAGE} from: {local.reason}")
    assert local.endpoint is not None
    source = Engine(local.endpoint.url)
    try:
        if not source.image_present(IMAGE):
            _skip_or_fail(f"{IMAGE} is not present locally (bash packaging/images/build.sh bash)")
    finally:
        source.close()
    daemon = start_tls_daemon()
    try:
        daemon.load_images(local.endpoint.url, [IMAGE])
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def remote_env(tls_daemon: TLSDaemon, monkeypatch: pytest.MonkeyPatch) -> Iterator[TLSDaemon]:
    """The process environment of a user of that daemon: ``DOCKER_HOST``, ``DOCKER_TLS_VERIFY``,
    ``DOCKER_CERT_PATH`` (the good client certificate). Checks that no sandbox container is left on it."""
    monkeypatch.setenv("DOCKER_HOST", tls_daemon.url)
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    monkeypatch.setenv("DOCKER_CERT_PATH", str(tls_daemon.certs.good))
    monkeypatch.setenv("PLAYGROUND_IMAGE_BASH", IMAGE)
    for name in ("DOCKER_TLS", "PLAYGROUND_DOCKER_ALLOW_INSECURE_TCP", "PLAYGROUND_DOCKER_ALLOW_HOST_REACH"):
        monkeypatch.delenv(name, raising=False)
    yield tls_daemon
    api = tls_daemon.api()
    try:
        left = api.containers(all=True, filters={"label": LABEL})
    finally:
        api.close()
    assert not left, f"containers left on the remote daemon: {[c['Id'][:12] for c in left]}"
