"""A remote engine: ``DOCKER_HOST=tcp://...`` with TLS client certificates, against a real second dockerd.

What must work over TLS: one-shot runs with ``/in`` and ``/out``, and
sessions. What must be refused with a reason: serving and network policies
(the proxy, the firewall and the way into the guest's namespace are local),
plain TCP without the opt-in (refused before any connection), and a
certificate either side does not accept (a quick, clear error, not a hang).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.docker import DockerBackend
from backends.docker.remote import INSECURE_ENV
from playground.core import (
    DOCKER_ONLY,
    BackendUnavailable,
    Limits,
    NetPolicy,
    Sandbox,
    ServeOpts,
    Spec,
    Unsupported,
)
from playground.packs import bash
from playground.serve import start_service_proxy

from .tlsdaemon import TLSDaemon

LIMITS = Limits(wall_time=30.0, cpu_time=30.0)


@pytest.fixture
def remote_sandbox(remote_env: TLSDaemon) -> Iterator[Sandbox]:
    backend = DockerBackend(packs=[bash.PACK], pull_timeout=10.0)
    sandbox = Sandbox(
        backends=[backend],
        packs=[bash.PACK],
        policy=DOCKER_ONLY,
        default_limits=LIMITS,
        proxy_starter=start_service_proxy,
    )
    yield sandbox
    sandbox.close()
    backend.close()


async def test_run_with_in_and_out_over_tls(remote_sandbox: Sandbox, remote_env: TLSDaemon) -> None:
    code = "cat /in/data.txt; cat; tr a-z A-Z </in/data.txt >/out/upper.txt; echo err >&2; exit 3"
    spec = Spec(lang="bash", code=code, files={"data.txt": b"hello remote\n"}, stdin=b"and stdin\n")
    result = await remote_sandbox.run(spec)
    assert (result.stdout, result.stderr, result.exit_code) == (b"hello remote\nand stdin\n", b"err\n", 3)
    assert dict(result.files) == {"upper.txt": b"HELLO REMOTE\n"}
    assert result.backend == "docker"


async def test_doctor_names_the_remote_daemon(remote_env: TLSDaemon) -> None:
    backend = DockerBackend(packs=[bash.PACK])
    try:
        lines = {line.name: line for line in backend.diagnostics()}
    finally:
        backend.close()
    assert lines["docker daemon"].ok and remote_env.url in lines["docker daemon"].detail
    isolation = lines["docker host isolation"]
    assert not isolation.ok and "not local" in isolation.detail


async def test_session_over_tls(remote_sandbox: Sandbox) -> None:
    async with await remote_sandbox.new_session("bash") as session:
        assert (await session.eval("x=41; cd /tmp")).exit_code == 0
        result = await session.eval("echo $((x + 1)) $PWD")
        assert (result.stdout, result.exit_code) == (b"42 /tmp\n", 0)


async def test_serving_is_refused_with_the_reason(remote_sandbox: Sandbox) -> None:
    spec = Spec(lang="bash", code="sleep 60")
    with pytest.raises(Unsupported, match="not local"):
        await remote_sandbox.serve(spec, ServeOpts(ttl=30))


async def test_network_policy_is_refused_with_the_reason(
    remote_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not even when the user accepts that guests may reach host services: it cannot work remotely.
    monkeypatch.setenv("PLAYGROUND_DOCKER_ALLOW_HOST_REACH", "1")
    spec = Spec(lang="bash", code="echo never", net=NetPolicy(allow_hosts=("example.com",)))
    with pytest.raises(BackendUnavailable, match="needs the daemon on this machine") as caught:
        await remote_sandbox.run(spec)
    assert "egress proxy" in str(caught.value)


class CountingListener:
    """A TCP port that accepts connections and counts them (it never answers)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[CountingListener]:
    found = CountingListener()
    yield found
    found.close()


def test_plain_tcp_is_refused_without_connecting(listener: CountingListener, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{listener.port}")
    for name in ("DOCKER_TLS_VERIFY", "DOCKER_TLS", "DOCKER_CERT_PATH", INSECURE_ENV):
        monkeypatch.delenv(name, raising=False)
    backend = DockerBackend(packs=[bash.PACK], probe_timeout=1.0)
    try:
        backend.refresh()
        reason = backend.unavailable_reason(bash.PACK)
    finally:
        backend.close()
    assert reason is not None and "plain TCP" in reason and INSECURE_ENV in reason and "DOCKER_TLS_VERIFY" in reason
    assert listener.accepted == 0

    monkeypatch.setenv(INSECURE_ENV, "1")  # the explicit opt-in: now it is tried (and this port never answers)
    backend = DockerBackend(packs=[bash.PACK], probe_timeout=1.0)
    try:
        backend.refresh()
        reason = backend.unavailable_reason(bash.PACK)
    finally:
        backend.close()
    assert reason is not None and "does not answer" in reason
    assert listener.accepted >= 1


@pytest.mark.parametrize(
    ("folder", "expected"),
    [
        ("rogue_client", "most likely refusing the client certificate"),
        ("rogue_ca", "daemon's certificate is not signed by the CA"),
    ],
)
def test_a_certificate_from_another_ca_is_a_clear_error(
    remote_env: TLSDaemon, monkeypatch: pytest.MonkeyPatch, folder: str, expected: str
) -> None:
    cert_dir: Path = getattr(remote_env.certs, folder)
    monkeypatch.setenv("DOCKER_CERT_PATH", str(cert_dir))
    backend = DockerBackend(packs=[bash.PACK], probe_timeout=3.0)
    started = time.monotonic()
    try:
        backend.refresh()
        reason = backend.unavailable_reason(bash.PACK)
        [line] = backend.diagnostics()
    finally:
        backend.close()
    assert time.monotonic() - started < 5
    assert reason is not None and "TLS handshake failed" in reason and expected in reason
    assert not line.ok and "DOCKER_TLS_VERIFY" in line.hint


def test_missing_client_certificate_is_named(remote_env: TLSDaemon, monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:  # fmt: skip
    (tmp_path / "ca.pem").write_bytes((remote_env.certs.good / "ca.pem").read_bytes())
    monkeypatch.setenv("DOCKER_CERT_PATH", str(tmp_path))
    backend = DockerBackend(packs=[bash.PACK])
    try:
        backend.refresh()
        reason = backend.unavailable_reason(bash.PACK)
    finally:
        backend.close()
    assert reason is not None and "cert.pem, key.pem" in reason and str(tmp_path) in reason
