"""Which daemon the suite ran against, and what Podman refuses (with the reason) instead of doing badly.

``packaging/test.sh`` runs this directory twice: against Docker, then
against rootful Podman with Docker stopped and its socket gone. Detection
must find Podman by itself (no ``DOCKER_HOST``, no setting at all);
``PLAYGROUND_TEST_EXPECT_ENGINE`` (a test-only variable, read here and
nowhere in the product) makes sure the second pass really talked to Podman.

Refused on Podman (4.3, netavark), whatever ``PLAYGROUND_DOCKER_ALLOW_HOST_REACH``
says: runs with a network policy. netavark creates a network's bridge and
its gateway address only when the first container joins, so the egress
proxy (it listens on the gateway) and the host firewall (it must guard the
bridge before the guest can send) cannot be set up first.
"""

from __future__ import annotations

import os

import pytest

from backends.docker import DockerBackend
from backends.docker.detect import PODMAN_FIREWALL_REASON, PODMAN_NETPOLICY_REASON, DaemonProbe
from backends.docker.engine import Engine
from backends.docker.pool import PODMAN_POOL_REASON
from backends.docker.profile import LABEL, EngineKind
from playground.core import BackendUnavailable, NetPolicy, Sandbox, Spec
from playground.packs import bash

from .conftest import require_image


def test_detection_found_the_expected_daemon_by_itself(engine_kind: EngineKind) -> None:
    probe = DaemonProbe(timeout=3.0).get()
    assert probe.endpoint is not None and probe.info is not None, probe.reason
    expected = os.environ.get("PLAYGROUND_TEST_EXPECT_ENGINE", "")
    if expected:
        assert probe.info.kind.value == expected, f"{probe.endpoint} is {probe.info.kind.value}, not {expected}"
    if probe.info.kind is EngineKind.PODMAN:
        assert not os.environ.get("DOCKER_HOST"), "Podman must be found without DOCKER_HOST"
        assert probe.endpoint.source.startswith("Podman"), probe.endpoint
    assert probe.info.kind is engine_kind


async def test_network_policy_is_refused_on_podman_with_the_reason(
    engine: Engine, engine_kind: EngineKind, sandbox: Sandbox, backend: DockerBackend,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    if engine_kind is not EngineKind.PODMAN:
        pytest.skip("Docker enforces network policies (test_network.py, test_host_isolation.py)")
    require_image(engine, bash.PACK)
    networks = {n.id for n in engine.networks(label=LABEL)}
    monkeypatch.setenv("PLAYGROUND_DOCKER_ALLOW_HOST_REACH", "1")  # accepting host reach does not make it work
    spec = Spec(lang="bash", code="echo never", net=NetPolicy(allow_hosts=("example.com",)))
    with pytest.raises(BackendUnavailable) as caught:
        await sandbox.run(spec)
    assert PODMAN_NETPOLICY_REASON in str(caught.value)
    assert {n.id for n in engine.networks(label=LABEL)} == networks  # refused before anything was made
    isolation = {line.name: line for line in backend.diagnostics()}["docker host isolation"]
    assert not isolation.ok and PODMAN_FIREWALL_REASON in isolation.detail
    # A plain run on the same daemon works: only the network policy is refused.
    result = await sandbox.run(Spec(lang="bash", code="echo plain"))
    assert result.stdout == b"plain\n"


async def test_the_warm_pool_is_declined_on_podman_with_the_reason(
    engine: Engine, engine_kind: EngineKind, sandbox: Sandbox, backend: DockerBackend
) -> None:
    """Runs there always take a fresh container; nothing is prepared; the doctor line says why."""
    if engine_kind is not EngineKind.PODMAN:
        pytest.skip("Docker has the warm pool (test_pool.py)")
    require_image(engine, bash.PACK)
    before = set(engine.containers())
    for _ in range(2):
        assert (await sandbox.run(Spec(lang="bash", code="echo hi"))).stdout == b"hi\n"
    status = backend.pool_status()
    assert status.declined == PODMAN_POOL_REASON and status.prepared == {}
    assert set(engine.containers()) == before
    line = {d.name: d for d in backend.diagnostics()}["docker warm pool"]
    assert PODMAN_POOL_REASON in line.detail
