"""Routing with the real DockerBackend next to a (fake) Wasm backend: policies, no silent downgrade."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

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
    await sandbox.learn_availability()  # asking never waits for the daemon; learning does, off the loop
    assert sandbox.status("both").backend == "docker"
    result = await sandbox.run(Spec(lang="both", code="echo hi"))
    assert result.backend == "docker" and result.stdout == b"hi\n"


async def test_wasm_only_never_downgrades_to_docker(both_image: None, docker_backend: DockerBackend) -> None:
    with pytest.raises(BackendUnavailable, match="WASM_ONLY"):
        await make(docker_backend, WASM_ONLY).run(Spec(lang="bash", code="echo hi"))


async def test_network_policy_is_enforced_not_refused(
    both_image: None, docker_backend: DockerBackend, network_policy_supported: None
) -> None:
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


async def test_the_local_build_is_found_without_any_variable(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """No PLAYGROUND_IMAGE_BASH, no config file (as in an MCP client): playground-bash:local is used."""
    monkeypatch.delenv("PLAYGROUND_IMAGE_BASH", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", "/nonexistent")
    if engine.image_present("bash:5"):
        pytest.skip("the official bash:5 image is present; it would be preferred")
    if not engine.image_present("playground-bash:local"):
        pytest.fail("playground-bash:local is missing (bash packaging/images/build.sh bash)")
    backend = DockerBackend(packs=[bash.PACK])
    try:
        sandbox = Sandbox(backends=[backend], packs=[bash.PACK], policy=DOCKER_ONLY)
        result = await sandbox.run(Spec(lang="bash", code="echo hi from local"))
        assert result.stdout == b"hi from local\n"
        (line,) = [d for d in backend.diagnostics() if d.name == "docker image for bash"]
        assert line.ok and "playground-bash:local" in line.detail and "local build" in line.detail
    finally:
        backend.close()


async def test_missing_images_are_unavailable_with_the_command_that_fixes_it(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither the official image nor a local build: not available (no pull attempted), and the fix is named."""
    pack = replace(bash.PACK, name="nosuchpack", aliases=(), extensions=(),
                   docker=replace(bash.PACK.docker, image="playground-test-absent:0"))  # fmt: skip
    monkeypatch.delenv("PLAYGROUND_IMAGE_NOSUCHPACK", raising=False)
    backend = DockerBackend(pull_timeout=15.0, packs=[pack])
    events: list[str] = []
    try:
        sandbox = Sandbox(backends=[backend], packs=[pack], policy=DOCKER_ONLY)
        backend.refresh()
        reason = backend.unavailable_reason(pack)
        assert reason is not None and "run: playground images build nosuchpack" in reason
        assert "playground-test-absent:0" in reason and "playground-nosuchpack:local" in reason
        assert sandbox.status("nosuchpack").backend is None
        with pytest.raises(BackendUnavailable, match="playground images build nosuchpack"):
            await sandbox.run(Spec(lang="nosuchpack", code="echo hi"), on_progress=lambda m, f: events.append(m))
        assert events == []  # refused up front: nothing was pulled
        (line,) = [d for d in backend.diagnostics() if d.name == "docker image for nosuchpack"]
        assert not line.ok and line.hint.startswith("playground images build nosuchpack")
    finally:
        backend.close()
