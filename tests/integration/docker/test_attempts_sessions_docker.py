"""Issue #15 on the Docker tier's REPL sessions: what each eval tried, as the host sees it.

A session container has no network (``network_mode=none``) and lives across
evals, so its sinkhole and its spawn watch are set up once, when it starts,
and record into the log of the eval in flight (``backends.docker.evallog``).
Per eval: each connect and name lookup (refused), each command the code
runs (the driver and the interpreter are not records: ``echo`` in bash is a
builtin and is nothing, ``ls`` is a process of its own and is a record) and
the process limit. Nothing of one eval shows in the next.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from backends.docker import DockerBackend
from backends.docker.engine import Engine
from backends.docker.spawnwatch import ENDED
from playground.core import Attempt, AttemptKind, Limits, Observer, Sandbox, SessionConfig
from playground.packs import bash, node

from .conftest import require_image

NO_NET = "refused: no network in this sandbox"
RAN = "allowed: inside the container"
HELD = "refused: the guest was held to it"

Seen = set[tuple[AttemptKind, str, str, Observer]]


def seen(attempts: Sequence[Attempt]) -> Seen:
    return {(a.kind, a.target, a.verdict, a.observer) for a in attempts}


def host(kind: AttemptKind, target: str, verdict: str) -> tuple[AttemptKind, str, str, Observer]:
    return (kind, target, verdict, Observer.HOST)


@pytest.fixture(autouse=True)
def recorders(engine: Engine, backend: DockerBackend) -> None:
    require_image(engine, bash.PACK)
    require_image(engine, node.PACK)
    why = backend._network_record_reason()
    if why is not None:
        pytest.skip(f"no host records here: {why}")


async def test_bash_evals_record_their_own_commands_and_connects_and_nothing_else(sandbox: Sandbox) -> None:
    async with await sandbox.new_session("bash") as session:
        first = await session.eval("echo hi; x=1; cd /tmp; read -t 0.1 y; true")
        assert (first.stdout, first.attempts) == (b"hi\n", ())  # builtins only: nothing spawned
        spawned = await session.eval("sleep 0.2\nnow=$(sleep 0.2; echo 1)\necho $now")
        assert spawned.stdout == b"1\n", spawned.stderr
        assert seen(spawned.attempts) == {host(AttemptKind.PROCESS_SPAWN, "sleep 0.2", RAN)}
        assert spawned.attempts[0].count == 2
        # ls is a process of its own: a spawn, even when it ends before its command line can be read.
        listed = await session.eval("ls / >/dev/null")
        assert [(a.kind, a.verdict, a.observer) for a in listed.attempts] == [
            (AttemptKind.PROCESS_SPAWN, RAN, Observer.HOST)
        ]
        assert listed.attempts[0].target in {"ls /", "ls", ENDED}
        code = "(exec 3<>/dev/tcp/198.51.100.20/22) 2>/dev/null && echo connected || echo refused"
        connect = await session.eval(code)
        assert connect.stdout == b"refused\n"
        assert seen(connect.attempts) == {host(AttemptKind.NETWORK_CONNECT, "198.51.100.20:22", NO_NET)}
        lookup = await session.eval("getent hosts api.github.com || echo no answer")
        assert lookup.stdout == b"no answer\n"
        assert host(AttemptKind.DNS_LOOKUP, "api.github.com", NO_NET) in seen(lookup.attempts)
        assert {a.kind for a in lookup.attempts} == {AttemptKind.DNS_LOOKUP, AttemptKind.PROCESS_SPAWN}
        after = await session.eval("echo hi")
        assert (after.stdout, after.attempts) == (b"hi\n", ())  # nothing of the evals before


async def test_node_evals_record_their_spawns_and_connects(sandbox: Sandbox) -> None:
    async with await sandbox.new_session("node") as session:
        benign = await session.eval("const os = require('os'); 1 + 1")
        assert (benign.stdout, benign.attempts) == (b"2\n", ())
        spawn = await session.eval("require('child_process').execSync('sleep 0.2; ls /').length > 0")
        assert spawn.stdout == b"true\n", spawn.stderr
        lived = {
            host(AttemptKind.PROCESS_SPAWN, "/bin/sh -c sleep 0.2; ls /", RAN),
            host(AttemptKind.PROCESS_SPAWN, "sleep 0.2", RAN),
        }
        assert lived <= seen(spawn.attempts)
        (listed,) = seen(spawn.attempts) - lived  # ls ends within a millisecond: maybe read too late
        assert listed in {host(AttemptKind.PROCESS_SPAWN, target, RAN) for target in ("ls /", "ls", ENDED)}
        code = "new Promise(r => require('net').connect(443, '198.51.100.21').on('error', e => r(e.code)))"
        connect = await session.eval(code)
        assert connect.stdout == b"'ECONNREFUSED'\n"
        assert seen(connect.attempts) == {host(AttemptKind.NETWORK_CONNECT, "198.51.100.21:443", NO_NET)}
        after = await session.eval("1 + 1")
        assert (after.stdout, after.attempts) == (b"2\n", ())


async def test_what_a_background_job_does_between_evals_reaches_no_eval(sandbox: Sandbox) -> None:
    async with await sandbox.new_session("bash") as session:
        started = await session.eval("(sleep 1; ls /) >/dev/null 2>&1 &")
        assert seen(started.attempts) <= {host(AttemptKind.PROCESS_SPAWN, "sleep 1", RAN)}
        await asyncio.sleep(1.5)
        later = await session.eval("echo hi")
        assert (later.stdout, later.attempts) == (b"hi\n", ())


async def test_the_process_limit_is_recorded_for_the_eval_that_met_it(sandbox: Sandbox) -> None:
    config = SessionConfig(limits=Limits(wall_time=60.0, cpu_time=30.0, max_procs=4))
    async with await sandbox.new_session("bash", config) as session:
        assert (await session.eval("echo ready")).attempts == ()
        # The crowd is in a subshell: a fork that the kernel fails with EINTR (a child's SIGCHLD arriving
        # during it: likely when bash retries a refused fork just as a one-second sleep ends) is not one that
        # bash retries, and bash then exits with status 254. In the interpreter itself that would end the
        # session (bash's own choice, as for any bash script); in a subshell only the subshell ends.
        crowd = await session.eval(
            "(for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done; wait) 2>/dev/null; echo done"
        )
        # The driver's own output pumps need processes too: under the limit its output may be lost.
        assert crowd.exit_code == 0, crowd.stderr
        assert crowd.limits_reached == ("max_procs",)
        limit = [a for a in crowd.attempts if a.kind is AttemptKind.LIMIT_REACHED]
        assert [(a.observer, a.verdict) for a in limit] == [(Observer.HOST, HELD)]
        assert "process" in limit[0].target
        after = await session.eval("echo hi")
        assert (after.stdout, after.limits_reached, after.attempts) == (b"hi\n", (), ())


async def test_a_session_without_recorders_still_runs(sandbox: Sandbox, backend: DockerBackend) -> None:
    """Where the host cannot record (another PID namespace, rootless), evals go on with no host records."""
    backend._spawn_watch = False  # as if the process events could not be had
    backend._sinkhole_reason = lambda: "not here"  # type: ignore[method-assign]
    async with await sandbox.new_session("bash") as session:
        result = await session.eval("ls / >/dev/null; (exec 3<>/dev/tcp/198.51.100.22/80) 2>/dev/null; echo $?")
        assert result.stdout == b"1\n"
        assert [a for a in result.attempts if a.kind is not AttemptKind.LIMIT_REACHED] == []


async def test_closing_a_session_stops_its_recorders(sandbox: Sandbox) -> None:
    async with await sandbox.new_session("bash") as session:
        await session.eval("true")
    for _ in range(100):
        if not [t for t in threading.enumerate() if t.name == "docker-sinkhole"]:
            break
        await asyncio.sleep(0.1)
    assert [t.name for t in threading.enumerate() if t.name == "docker-sinkhole"] == []
