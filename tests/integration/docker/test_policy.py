"""Routing with the real DockerBackend next to a (fake) Wasm backend: policies, no silent downgrade."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.docker import DockerBackend
from backends.docker.engine import Engine
from playground.core import (
    DOCKER_ONLY,
    PREFER_WASM,
    WASM_ONLY,
    BackendUnavailable,
    NetPolicy,
    Pack,
    Sandbox,
    Spec,
    Unsupported,
    WasmSpec,
)
from playground.packs import bash
from tests.fake_backend import FakeBackend

from .conftest import TEST_LIMITS, require_image

#: A language both tiers can run: the fake "wasm" echoes, Docker runs bash for real.
BOTH = Pack(name="both", wasm=WasmSpec(module=None), docker=bash.PACK.docker)


@pytest.fixture
def both_image(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    require_image(engine, bash.PACK)
    import os

    monkeypatch.setenv("PLAYGROUND_IMAGE_BOTH", os.environ["PLAYGROUND_IMAGE_BASH"])


def make(policy_backend: DockerBackend, policy: object) -> Sandbox:
    from playground.core import Policy

    assert isinstance(policy, Policy)
    return Sandbox(
        backends=[FakeBackend("wasm", refuse=lambda p: None if p.wasm else "no Wasm runtime"), policy_backend],
        packs=[BOTH, bash.PACK],
        policy=policy,
        default_limits=TEST_LIMITS,
    )


@pytest.fixture
def docker_backend(engine: Engine) -> Iterator[DockerBackend]:
    b = DockerBackend()
    yield b
    b.close()


async def test_prefer_wasm_uses_wasm_when_it_can(both_image: None, docker_backend: DockerBackend) -> None:
    result = await make(docker_backend, PREFER_WASM).run(Spec(lang="both", code="echo hi"))
    assert result.backend == "wasm" and result.stdout == b"echo hi"


async def test_prefer_wasm_falls_to_docker_for_docker_only_packs(
    both_image: None, docker_backend: DockerBackend
) -> None:
    result = await make(docker_backend, PREFER_WASM).run(Spec(lang="bash", code="echo hi"))
    assert result.backend == "docker" and result.stdout == b"hi\n"


async def test_docker_only_runs_in_docker(both_image: None, docker_backend: DockerBackend) -> None:
    sandbox = make(docker_backend, DOCKER_ONLY)
    assert sandbox.status("both").backend == "docker"
    result = await sandbox.run(Spec(lang="both", code="echo hi"))
    assert result.backend == "docker" and result.stdout == b"hi\n"


async def test_wasm_only_never_downgrades_to_docker(both_image: None, docker_backend: DockerBackend) -> None:
    with pytest.raises(BackendUnavailable, match="WASM_ONLY"):
        await make(docker_backend, WASM_ONLY).run(Spec(lang="bash", code="echo hi"))


async def test_network_policy_is_enforced_not_refused(both_image: None, docker_backend: DockerBackend) -> None:
    """Docker enforces a NetPolicy (tests/integration/docker/test_network.py); the fake Wasm backend cannot."""
    spec = Spec(lang="both", code="echo hi", net=NetPolicy(allow_hosts=("example.test",)))
    result = await make(docker_backend, PREFER_WASM).run(spec)
    assert result.backend == "docker" and result.stdout == b"hi\n" and result.net_log == ()
    with pytest.raises(Unsupported, match="network"):
        await make(docker_backend, WASM_ONLY).run(spec)


async def test_docker_missing_is_reported_not_downgraded(
    both_image: None, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/playground-test.sock")
    backend = DockerBackend()
    try:
        sandbox = make(backend, DOCKER_ONLY)
        with pytest.raises(BackendUnavailable, match=r"no socket at /nonexistent/playground-test\.sock"):
            await sandbox.run(Spec(lang="both", code="echo hi"))
        # PREFER_WASM still runs "both" on wasm; bash has nowhere to go and says why
        prefer = make(backend, PREFER_WASM)
        assert (await prefer.run(Spec(lang="both", code="x"))).backend == "wasm"
        with pytest.raises(BackendUnavailable, match="docker: DOCKER_HOST"):
            await prefer.run(Spec(lang="bash", code="echo hi"))
    finally:
        backend.close()


async def test_missing_image_offline_is_a_clear_error(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The official image is not here and no registry is reachable: a clear, fast BackendUnavailable."""
    monkeypatch.delenv("PLAYGROUND_IMAGE_BASH", raising=False)
    if engine.image_present("bash:5"):
        pytest.skip("the official bash:5 image is present, nothing to pull")
    backend = DockerBackend(pull_timeout=15.0)
    events: list[str] = []
    try:
        sandbox = Sandbox(backends=[backend], packs=[bash.PACK], policy=DOCKER_ONLY)
        with pytest.raises(BackendUnavailable) as info:
            await sandbox.run(Spec(lang="bash", code="echo hi"), on_progress=lambda m, f: events.append(m))
        message = str(info.value)
        assert "bash:5" in message and "could not be pulled" in message
        assert "packaging/images/build.sh bash" in message and "PLAYGROUND_IMAGE_BASH" in message
        assert events and "pulling bash:5" in events[0]
        # now routing knows: the reason is reported without another pull
        reason = backend.unavailable_reason(bash.PACK)
        assert reason is not None and "could not be pulled" in reason
    finally:
        backend.close()
