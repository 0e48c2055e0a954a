"""Daemon detection and image overrides, without a daemon."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from pathlib import Path

import pytest

from backends.docker import DockerBackend, ImageResolver
from backends.docker.detect import candidate_endpoints
from playground.core import CHECKING, DOCKER_ONLY, BackendUnavailable, Sandbox, Spec, WasmSpec
from playground.packs import bash, node


def test_candidates_follow_docker_host() -> None:
    assert [e.url for e in candidate_endpoints({"DOCKER_HOST": "tcp://127.0.0.1:2375"})] == ["tcp://127.0.0.1:2375"]
    urls = [e.url for e in candidate_endpoints({"XDG_RUNTIME_DIR": "/run/user/1000"})]
    assert urls == [
        "unix:///var/run/docker.sock",
        "unix:///run/user/1000/docker.sock",
        "unix:///run/user/1000/podman/podman.sock",
        "unix:///run/podman/podman.sock",
    ]


def test_missing_daemon_is_backend_unavailable_with_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    backend = DockerBackend(packs=[bash.PACK])
    started = time.monotonic()
    sandbox = Sandbox(backends=[backend], packs=[bash.PACK], policy=DOCKER_ONLY)
    with pytest.raises(BackendUnavailable, match="no socket at"):  # the run learns what it needs, off the loop
        asyncio.run(sandbox.run(Spec(lang="bash", code="echo hi")))
    reason = backend.unavailable_reason(bash.PACK)  # and the snapshot now says it
    assert reason is not None and "no socket at" in reason and "no-such.sock" in reason
    assert time.monotonic() - started < 5
    [line] = backend.diagnostics()
    assert not line.ok and not line.required and line.hint


def test_socket_that_does_not_answer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Asking never waits for a daemon that does not answer; ``refresh`` does, within the probe's timeout."""
    import socket

    path = tmp_path / "silent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    try:
        monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
        backend = DockerBackend(probe_timeout=0.5)
        started = time.monotonic()
        assert backend.unavailable_reason(bash.PACK) == CHECKING and not backend.availability_known
        assert time.monotonic() - started < 0.05  # the GUI thread's budget is 16 ms; this is a dict lookup
        started = time.monotonic()
        backend.refresh()
        assert time.monotonic() - started < 3
        reason = backend.unavailable_reason(bash.PACK)
        assert reason is not None and "does not answer" in reason and backend.availability_known
        started = time.monotonic()
        assert backend.unavailable_reason(bash.PACK) == reason  # from the snapshot: no probe
        assert time.monotonic() - started < 0.05
    finally:
        server.close()


async def test_a_silent_daemon_holds_up_no_wasm_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Routing waits only for backends the policy prefers over its choice: Wasm runs do not wait for Docker."""
    import socket

    from tests.fake_backend import FakeBackend

    path = tmp_path / "silent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    try:
        monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
        docker = DockerBackend(packs=[bash.PACK], probe_timeout=2.0)
        pack = dataclasses.replace(bash.PACK, name="both", aliases=(), extensions=(), wasm=WasmSpec(module=None))
        wasm = FakeBackend("wasm", refuse=lambda p: None if p.wasm is not None else "no Wasm runtime")
        sandbox = Sandbox(backends=[wasm, docker], packs=[pack, bash.PACK])
        started = time.monotonic()
        result = await sandbox.run(Spec(lang="both", code="print hi"))
        assert result.backend == "wasm" and time.monotonic() - started < 0.5
        started = time.monotonic()
        with pytest.raises(BackendUnavailable, match="does not answer"):  # bash needs Docker: it learns, off the loop
            await sandbox.run(Spec(lang="bash", code="echo hi"))
        assert time.monotonic() - started < 5
    finally:
        server.close()


def test_pack_without_docker_spec() -> None:
    from playground.core import Pack, WasmSpec

    pack = Pack(name="wasmonly", wasm=WasmSpec(module=None))
    assert DockerBackend().unavailable_reason(pack) == "wasmonly has no Docker image"


def test_image_override_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "images.json"
    resolver = ImageResolver(config)
    monkeypatch.delenv("PLAYGROUND_IMAGE_NODE", raising=False)
    assert resolver.resolve(node.PACK, lambda image: False) == ("node:22-slim", "pack node")
    config.write_text(json.dumps({"nodejs": "from-file:1"}))
    assert resolver.resolve(node.PACK, lambda image: False)[0] == "from-file:1"
    monkeypatch.setenv("PLAYGROUND_IMAGE_NODE", "from-env:2")
    assert resolver.resolve(node.PACK, lambda image: False) == ("from-env:2", "$PLAYGROUND_IMAGE_NODE")


def test_the_local_build_is_used_when_the_official_image_is_absent(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    resolver = ImageResolver(tmp_path / "none.json")
    monkeypatch.delenv("PLAYGROUND_IMAGE_BASH", raising=False)
    local = lambda image: image == "playground-bash:local"  # noqa: E731
    assert resolver.resolve(bash.PACK, local) == (
        "playground-bash:local",
        "local build (playground images build bash)",
    )
    # The official image wins when both are here; an explicit choice is never second-guessed.
    assert resolver.resolve(bash.PACK, lambda image: True)[0] == "bash:5"
    monkeypatch.setenv("PLAYGROUND_IMAGE_BASH", "mine:1")
    assert resolver.resolve(bash.PACK, local) == ("mine:1", "$PLAYGROUND_IMAGE_BASH")


def test_bad_config_file_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "images.json"
    config.write_text("{not json")
    monkeypatch.delenv("PLAYGROUND_IMAGE_BASH", raising=False)
    assert ImageResolver(config).resolve(bash.PACK, lambda image: False)[0] == "bash:5"


def test_close_is_idempotent_and_final() -> None:
    backend = DockerBackend()
    backend.close()
    backend.close()
    assert backend.unavailable_reason(bash.PACK) == "the Docker backend is closed"
