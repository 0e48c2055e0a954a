"""Fixtures for the Docker tier's tests: a real daemon, local images, leak checks.

Without a reachable daemon every test here is skipped with the reason;
under ``CI=true`` a missing daemon fails instead (CI must start one:
``bash packaging/docker_daemon.sh start``). Images come from
``packaging/images/build.sh``: a pack whose ``PLAYGROUND_IMAGE_<PACK>`` is
unset is pointed at ``playground-<pack>:local`` when that image exists.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.docker import DockerBackend
from backends.docker.detect import DaemonProbe
from backends.docker.engine import Engine
from backends.docker.images import env_var
from backends.docker.pool import parked_everywhere, settle
from backends.docker.profile import LABEL, EngineKind
from playground.core import DOCKER_ONLY, Limits, Pack, Sandbox
from playground.packs import ALL_PACKS
from playground.serve import start_service_proxy

#: Every pack with a Docker tier.
PACKS: tuple[Pack, ...] = tuple(p for p in ALL_PACKS if p.docker is not None)

#: Generous limits so only the limit under test trips.
TEST_LIMITS = Limits(wall_time=30.0, cpu_time=30.0)
#: The compilers need more room than the defaults.
COMPILE_LIMITS = Limits(wall_time=120.0, cpu_time=120.0, memory=768 << 20, fs_quota=256 << 20, max_files=4096)


#: Held while a pytest process runs tests against the daemon: the leak checks count every
#: container on it, so two test runs on one daemon (two worktrees, CI beside a developer) take turns.
DAEMON_LOCK = Path(tempfile.gettempdir()) / "sandbox-playground-docker-tests.lock"


@pytest.fixture(scope="session")
def daemon_turn() -> Iterator[None]:
    with DAEMON_LOCK.open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"\nwaiting for another test run's turn on the daemon ({DAEMON_LOCK})", flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def engine(daemon_turn: None) -> Iterator[Engine]:
    probe = DaemonProbe(timeout=3.0).get()
    if probe.endpoint is None:
        message = f"no Docker daemon reachable: {probe.reason} (start one: bash packaging/docker_daemon.sh start)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    eng = Engine(probe.endpoint.url, timeout=30.0, tls=probe.endpoint.tls)
    for pack in PACKS:
        name = env_var(pack.name)
        local = f"playground-{pack.name}:local"
        if not os.environ.get(name) and eng.image_present(local):
            os.environ[name] = local
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def engine_kind(engine: Engine) -> EngineKind:
    """Docker or Podman: the few tests whose expectations differ ask (see ``test_podman``)."""
    return engine.ping().kind


@pytest.fixture
def network_policy_supported(engine_kind: EngineKind) -> None:
    """Podman refuses ``NetPolicy`` runs (``detect.PODMAN_NETPOLICY_REASON``); ``test_podman`` asserts that
    refusal, so the tests of what the policy enforces have nothing to check there."""
    if engine_kind is EngineKind.PODMAN:
        pytest.skip("network policies are refused on Podman (asserted by test_podman.py)")


def image_available(engine: Engine, pack: Pack) -> bool:
    image = os.environ.get(env_var(pack.name))
    return bool(image) and engine.image_present(image or "")


@pytest.fixture(autouse=True)
def no_container_leaks(engine: Engine) -> Iterator[None]:
    """Every test leaves exactly as many sandbox containers as it found, but for containers parked in a warm
    pool that is still open (a module's backend; ``pool.parked_everywhere``): those are its, not leaks. A
    closed pool's container that was still being created when ``close`` returned is removed by its own
    thread: that removal is waited for (``pool.settle``), and must happen."""
    before = set(engine.containers())
    yield
    assert settle(30.0), "a warm pool's threads did not finish within 30 s"
    after = set(engine.containers()) - parked_everywhere()
    assert after <= before, f"containers leaked: {sorted(c[:12] for c in after - before)}"


@pytest.fixture
def backend(engine: Engine) -> Iterator[DockerBackend]:
    b = DockerBackend(packs=PACKS, pull_timeout=10.0)
    b.refresh()  # what it can run, learned before the test asks (asking never waits)
    yield b
    b.close()


@pytest.fixture
def sandbox(backend: DockerBackend) -> Iterator[Sandbox]:
    sb = Sandbox(
        backends=[backend],
        packs=PACKS,
        policy=DOCKER_ONLY,
        default_limits=TEST_LIMITS,
        proxy_starter=start_service_proxy,
    )
    yield sb
    sb.close()


def require_image(engine: Engine, pack: Pack) -> None:
    if not image_available(engine, pack):
        image = os.environ.get(env_var(pack.name)) or (pack.docker and pack.docker.image)
        pytest.skip(f"image {image} for {pack.name} is not present (bash packaging/images/build.sh {pack.name})")


@pytest.fixture
def no_network_leaks(engine: Engine) -> Iterator[None]:
    """Fails the test if it leaves one of our networks behind."""
    before = {n.id for n in engine.networks(label=LABEL)}
    yield
    after = {n.id for n in engine.networks(label=LABEL)}
    assert after <= before, f"networks leaked: {sorted(after - before)}"
