"""The warm pool (issue #18): prepared containers must be indistinguishable from fresh ones, used once, and gone
on ``close``.

Each test tries to break one promise: a pooled container hardened like a fresh
one (the inspected ``HostConfig`` compared whole); nothing of one run reaches
the next (a file, an environment variable, a background process); runs whose
create arguments differ never take a prepared container; limits, exit
codes, ``/in`` and ``/out`` hold on the pooled path; ``close`` removes every
prepared container in under a second; a pool of size 0 prepares nothing.
A test knows a run had the prepared container when that container is gone
after the run (a used one is removed, on the pool's thread; one not taken stays).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from backends.docker import DockerBackend
from backends.docker.engine import Engine
from backends.docker.images import env_var
from backends.docker.pool import POOL_LABEL, sweep_stale
from backends.docker.profile import EngineKind, oneshot_profile
from playground.core import (
    DEFAULT_LIMITS,
    DOCKER_ONLY,
    AttemptKind,
    Limits,
    Observer,
    OutputLimitExceeded,
    Sandbox,
    Spec,
    TimeLimitExceeded,
)
from playground.packs import bash

from .conftest import PACKS, TEST_LIMITS, require_image


@pytest.fixture(autouse=True)
def docker_only(engine: Engine, engine_kind: EngineKind) -> None:
    require_image(engine, bash.PACK)
    if engine_kind is EngineKind.PODMAN:
        pytest.skip("the warm pool is declined on Podman (pool.PODMAN_POOL_REASON; asserted in test_podman.py)")


@pytest.fixture
def pooled() -> Iterator[tuple[DockerBackend, Sandbox]]:
    backend = DockerBackend(packs=PACKS, pull_timeout=10.0, pool_size=1)
    backend.refresh()
    sandbox = Sandbox(backends=[backend], packs=PACKS, policy=DOCKER_ONLY, default_limits=TEST_LIMITS)
    yield backend, sandbox
    sandbox.close()
    backend.close()


def parked(backend: DockerBackend) -> set[str]:
    return backend._warm.parked_ids()


async def prepared(backend: DockerBackend, lang: str = "bash", timeout: float = 20.0) -> str:
    """Wait until the pool has a container parked for ``lang``; return its id."""
    deadline = time.monotonic() + timeout
    while backend.pool_status().prepared.get(lang, 0) < 1:
        assert time.monotonic() < deadline, "the pool never prepared a container"
        await asyncio.sleep(0.02)
    (container,) = parked(backend)
    return container


async def gone(engine: Engine, container: str, timeout: float = 10.0) -> bool:
    """Whether ``container`` is removed within ``timeout`` (a used one is removed on the pool's thread)."""
    deadline = time.monotonic() + timeout
    while container in engine.containers():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def test_a_run_takes_the_prepared_container_and_it_is_removed(
    pooled: tuple[DockerBackend, Sandbox], engine: Engine
) -> None:
    backend, sandbox = pooled
    assert backend.pool_status().prepared == {}, "nothing is prepared before a language is used"
    await sandbox.run(Spec(lang="bash", code="true"))
    waiting = await prepared(backend)
    assert waiting in engine.containers()
    second = await sandbox.run(Spec(lang="bash", code="echo warm"))
    assert second.stdout == b"warm\n"
    assert await gone(engine, waiting), "the run did not take the prepared container, or did not remove it"
    refill = await prepared(backend)
    assert refill != waiting


async def test_prepared_and_fresh_containers_are_hardened_alike(
    pooled: tuple[DockerBackend, Sandbox], engine: Engine
) -> None:
    backend, sandbox = pooled
    await sandbox.run(Spec(lang="bash", code="true"))
    waiting = await prepared(backend)
    before = set(engine.containers())
    fresh_backend = DockerBackend(packs=PACKS, pull_timeout=10.0, pool_size=0)
    fresh_sandbox = Sandbox(backends=[fresh_backend], packs=PACKS, policy=DOCKER_ONLY, default_limits=TEST_LIMITS)
    try:
        task = asyncio.create_task(fresh_sandbox.run(Spec(lang="bash", code="sleep 30")))
        deadline = time.monotonic() + 20
        while not (set(engine.containers()) - before - parked(backend)):
            assert time.monotonic() < deadline, "the fresh container never appeared"
            await asyncio.sleep(0.05)
        (fresh,) = set(engine.containers()) - before - parked(backend)
        api: Any = engine._api
        pooled_attrs, fresh_attrs = api.inspect_container(waiting), api.inspect_container(fresh)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        fresh_sandbox.close()
        fresh_backend.close()
    assert pooled_attrs["HostConfig"] == fresh_attrs["HostConfig"]
    for field in ("User", "WorkingDir", "NetworkDisabled", "Image"):
        assert pooled_attrs["Config"].get(field) == fresh_attrs["Config"].get(field), field
    assert pooled_attrs["HostConfig"]["NetworkMode"] == "none"
    assert pooled_attrs["Config"]["Labels"].get(POOL_LABEL) == "prepared"
    assert set(pooled_attrs["Config"]["Labels"]) - {POOL_LABEL} == set(fresh_attrs["Config"]["Labels"])


async def test_nothing_of_one_pooled_run_reaches_the_next(
    pooled: tuple[DockerBackend, Sandbox], engine: Engine
) -> None:
    backend, sandbox = pooled
    await sandbox.run(Spec(lang="bash", code="true"))
    used = []
    for _ in range(2):  # both runs on prepared containers
        used.append(await prepared(backend))
        plant = await sandbox.run(
            Spec(
                lang="bash",
                code=(
                    "echo; ls -A /tmp /work /out | tr '\\n' ' '; echo; echo \"[$PLANTED]\"; "
                    "ps -eo comm= 2>/dev/null | sort | tr '\\n' ' ' || ls /proc | grep -c '^[0-9]'; echo; "
                    "echo secret > /tmp/left; echo secret > /work/left; echo secret > /out/left; "
                    "export PLANTED=yes; (setsid sleep 300 &) ; sleep 0.2"
                ),
            )
        )
        lines = plant.stdout.decode().splitlines()
        assert await gone(engine, used[-1]), "the run did not take the prepared container"
        assert "left" not in lines[1], f"a file of an earlier run is visible: {lines[1]!r}"
        assert lines[2] == "[]", "an environment variable of an earlier run is visible"
        assert "sleep" not in lines[3], f"a process of an earlier run is alive: {lines[3]!r}"
    assert used[0] != used[1], "two runs shared a container"


async def test_other_limits_take_a_fresh_container(pooled: tuple[DockerBackend, Sandbox], engine: Engine) -> None:
    backend, sandbox = pooled
    await sandbox.run(Spec(lang="bash", code="true"))
    waiting = await prepared(backend)
    seen: set[str] = set()
    code = "sleep 1; cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null"
    task = asyncio.create_task(sandbox.run(Spec(lang="bash", code=code, limits=Limits(memory=200 << 20))))
    while not task.done():
        seen |= set(engine.containers())
        await asyncio.sleep(0.05)
    other = task.result()
    assert other.stdout.strip() == str(200 << 20).encode(), "the run did not get its own memory limit"
    assert waiting in seen and len(seen - {waiting}) >= 1, "no fresh container was created for other limits"
    assert waiting not in parked(backend), "prepared containers of the old limits were kept"


async def test_the_guests_environment_reaches_a_pooled_run(
    pooled: tuple[DockerBackend, Sandbox], engine: Engine
) -> None:
    backend, sandbox = pooled
    await sandbox.run(Spec(lang="bash", code="true"))
    waiting = await prepared(backend)
    env = {"GREETING": "hi there", "QUOTED": "it's $HOME `x` \"y\"\nline2"}
    result = await sandbox.run(Spec(lang="bash", code='printf "%s|%s" "$GREETING" "$QUOTED"', env=env))
    assert await gone(engine, waiting), "the run did not take the prepared container"
    assert result.stdout.decode() == f"{env['GREETING']}|{env['QUOTED']}"


async def test_limits_exit_codes_and_files_hold_on_the_pooled_path(pooled: tuple[DockerBackend, Sandbox]) -> None:
    backend, sandbox = pooled
    await sandbox.run(Spec(lang="bash", code="true"))
    await prepared(backend)
    result = await sandbox.run(
        Spec(lang="bash", code="cat /in/data.txt > /out/copy.txt; echo done; exit 3", files={"data.txt": b"in!"})
    )
    assert (result.exit_code, result.stdout) == (3, b"done\n")
    assert dict(result.files) == {"copy.txt": b"in!"}
    await prepared(backend)
    with pytest.raises(TimeLimitExceeded):
        await sandbox.run(Spec(lang="bash", code="echo up; sleep 20", limits=Limits(wall_time=1.0)))
    await prepared(backend)
    with pytest.raises(OutputLimitExceeded):
        await sandbox.run(Spec(lang="bash", code="yes", limits=Limits(max_output=10_000)))


async def test_close_removes_prepared_containers_within_a_second(engine: Engine) -> None:
    backend = DockerBackend(packs=PACKS, pull_timeout=10.0, pool_size=2)
    sandbox = Sandbox(backends=[backend], packs=PACKS, policy=DOCKER_ONLY, default_limits=TEST_LIMITS)
    try:
        await sandbox.run(Spec(lang="bash", code="true"))
        deadline = time.monotonic() + 20
        while backend.pool_status().prepared.get("bash", 0) < 2:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        waiting = parked(backend)
        assert waiting <= set(engine.containers())
    finally:
        sandbox.close()
        started = time.monotonic()
        backend.close()
        took = time.monotonic() - started
    assert took < 1.0, f"close() took {took:.2f}s with prepared containers"
    assert not waiting & set(engine.containers()), "close() left prepared containers"


async def test_size_zero_prepares_nothing(engine: Engine) -> None:
    backend = DockerBackend(packs=PACKS, pull_timeout=10.0, pool_size=0)
    sandbox = Sandbox(backends=[backend], packs=PACKS, policy=DOCKER_ONLY, default_limits=TEST_LIMITS)
    try:
        before = set(engine.containers())
        for _ in range(2):
            await sandbox.run(Spec(lang="bash", code="true"))
        await asyncio.sleep(0.5)
        assert set(engine.containers()) == before
        assert backend.pool_status().prepared == {}
    finally:
        sandbox.close()
        backend.close()


async def test_doctor_reports_the_pool_and_a_parked_containers_memory(pooled: tuple[DockerBackend, Sandbox]) -> None:
    backend, sandbox = pooled
    line = {d.name: d for d in backend.diagnostics()}["docker warm pool"]
    assert "size 1" in line.detail and "none yet" in line.detail
    await sandbox.run(Spec(lang="bash", code="true"))
    await prepared(backend)
    line = {d.name: d for d in backend.diagnostics()}["docker warm pool"]
    assert line.ok and not line.required
    assert "prepared now: bash 1" in line.detail
    memory = backend._warm.idle_memory()
    assert memory is not None and 0 < memory < 64 << 20, f"a parked container uses {memory} bytes?"
    assert "idle memory per prepared container" in line.detail and "MiB (cgroup)" in line.detail
    backend.set_pool_size(0)
    line = {d.name: d for d in backend.diagnostics()}["docker warm pool"]
    assert "off (size 0)" in line.detail


async def test_a_parked_container_costs_no_cpu(pooled: tuple[DockerBackend, Sandbox], engine: Engine) -> None:
    """Idle means idle: the parked shell blocks on its stdin, and nothing on the host polls the pool."""
    backend, sandbox = pooled
    await sandbox.run(Spec(lang="bash", code="true"))
    waiting = await prepared(backend)
    await asyncio.sleep(0.5)
    api: Any = engine._api
    first = api.stats(waiting, stream=False)["cpu_stats"]["cpu_usage"]["total_usage"]
    threads_before = {t.name for t in threading.enumerate() if t.name.startswith("docker-pool")}
    await asyncio.sleep(2.0)
    second = api.stats(waiting, stream=False)["cpu_stats"]["cpu_usage"]["total_usage"]
    assert second - first < 5_000_000, f"a parked container used {(second - first) / 1e6:.1f} ms of CPU in 2 s"
    assert threads_before == set(), f"pool threads alive while idle: {threads_before}"


async def test_close_during_a_refill_leaves_nothing(engine: Engine) -> None:
    """``close`` while containers are still being prepared: they are removed as soon as they exist."""
    backend = DockerBackend(packs=PACKS, pull_timeout=10.0, pool_size=3)
    sandbox = Sandbox(backends=[backend], packs=PACKS, policy=DOCKER_ONLY, default_limits=TEST_LIMITS)
    before = set(engine.containers())
    try:
        await sandbox.run(Spec(lang="bash", code="true"))  # starts three refills
    finally:
        sandbox.close()
        started = time.monotonic()
        backend.close()
        took = time.monotonic() - started
    assert took < 1.0, f"close() took {took:.2f}s"
    deadline = time.monotonic() + 20
    while set(engine.containers()) - before:
        assert time.monotonic() < deadline, "containers prepared during close() were left behind"
        await asyncio.sleep(0.1)


async def test_the_host_records_a_pooled_runs_attempts_as_a_fresh_runs(
    pooled: tuple[DockerBackend, Sandbox], engine: Engine
) -> None:
    """The sinkhole of a prepared container is set up while it waits; it must record this run, and only it."""
    backend, sandbox = pooled
    why = backend._network_record_reason()
    if why is not None:
        pytest.skip(f"no host records here: {why}")
    code = (
        "(exec 3<>/dev/tcp/198.51.100.20/22) 2>/dev/null && echo connected || echo refused\n"
        "/bin/sleep 0.2\necho done\n"
    )
    expected = {
        (AttemptKind.NETWORK_CONNECT, "198.51.100.20:22", "refused: no network in this sandbox", Observer.HOST),
        (AttemptKind.PROCESS_SPAWN, "/bin/sleep 0.2", "allowed: inside the container", Observer.HOST),
    }
    fresh = await sandbox.run(Spec(lang="bash", code=code))  # the language's first run: a fresh container
    used = await prepared(backend)
    pooled_run = await sandbox.run(Spec(lang="bash", code=code))
    assert await gone(engine, used), "the second run did not take the prepared container"
    for result in (fresh, pooled_run):
        assert result.stdout == b"refused\ndone\n", result.stderr
        assert {(a.kind, a.target, a.verdict, a.observer) for a in result.attempts} == expected
    await prepared(backend)
    quiet = await sandbox.run(Spec(lang="bash", code="echo hi"))
    assert quiet.attempts == (), "a record of an earlier run, or of the parked phase, reached this one"


def _labelled(engine: Engine, argv: list[str]) -> str:
    """A started container that carries the pool's label, made from the hardened one-shot profile."""
    spec = bash.PACK.docker
    assert spec is not None
    kwargs = oneshot_profile(DEFAULT_LIMITS.merged(TEST_LIMITS).validate(), spec, EngineKind.DOCKER)
    kwargs["labels"] = {**dict(kwargs.get("labels") or {}), POOL_LABEL: "prepared"}  # type: ignore[call-overload]
    container = engine.create(os.environ[env_var("bash")], argv, kwargs, {})
    engine.start(container)
    return container


async def test_a_sweep_removes_only_prepared_containers_whose_owner_is_gone(engine: Engine) -> None:
    exited = _labelled(engine, ["true"])
    running = _labelled(engine, ["sleep", "30"])
    try:
        engine.wait(exited, 10.0)
        assert sweep_stale(engine) == 0  # exited moments ago: a run may still be reading it
        assert exited in engine.containers(label=POOL_LABEL)
        assert sweep_stale(engine, older_than=0.0) >= 1
        left = set(engine.containers(label=POOL_LABEL))
        assert exited not in left and running in left  # a live pool's container is never touched
    finally:
        for container in (exited, running):
            if container in engine.containers():
                engine.remove(container)


async def test_a_parked_container_of_a_killed_process_exits_and_is_swept(engine: Engine, tmp_path: Any) -> None:
    """The owner dies without ``close`` (``kill -9``): its parked container exits, and a sweep removes it."""
    script = tmp_path / "owner.py"
    script.write_text(
        "import asyncio, sys, time\n"
        "from backends.docker import DockerBackend\n"
        "from playground.core import DOCKER_ONLY, Limits, Sandbox, Spec\n"
        "from playground.packs import bash\n"
        "backend = DockerBackend(packs=[bash.PACK], pool_size=1)\n"
        "sandbox = Sandbox(backends=[backend], packs=[bash.PACK], policy=DOCKER_ONLY,\n"
        "                  default_limits=Limits(wall_time=30.0, cpu_time=30.0))\n"
        "asyncio.run(sandbox.run(Spec(lang='bash', code='true')))\n"
        "while not backend.pool_status().prepared.get('bash'):\n"
        "    time.sleep(0.05)\n"
        "print(*backend._warm.parked_ids(), flush=True)\n"
        "time.sleep(60)\n"
    )
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=dict(os.environ),
                             cwd=str(tmp_path))  # fmt: skip
    try:
        assert owner.stdout is not None
        (container,) = owner.stdout.readline().split()
        assert container in engine.containers(label=POOL_LABEL)
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait(10)
    try:
        deadline = time.monotonic() + 20
        while engine.state(container).running:  # the attach stream closed with its owner: the shell reads EOF
            assert time.monotonic() < deadline, "a parked container outlived its owner"
            await asyncio.sleep(0.1)
        assert sweep_stale(engine, older_than=0.0) >= 1
        assert container not in engine.containers()
    finally:
        if container in engine.containers():
            engine.remove(container)
