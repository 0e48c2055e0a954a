"""REPL sessions on a real daemon: state, echo, forged control frames, limits, cleanup."""

from __future__ import annotations

import asyncio
import time

import pytest

from backends.docker import DockerBackend
from backends.docker.engine import Engine
from playground.core import (
    DOCKER_ONLY,
    Limits,
    MemoryLimitExceeded,
    OutputLimitExceeded,
    Sandbox,
    SessionClosed,
    SessionConfig,
    SessionKilled,
    TimeLimitExceeded,
    Unsupported,
)
from playground.packs import bash, java, node

from .conftest import PACKS, TEST_LIMITS, require_image

#: What a forged result looks like: the driver's frame layout with a plausible 32-hex-digit nonce.
FAKE_NONCE = "0123456789abcdef0123456789abcdef"


@pytest.fixture(autouse=True)
def images(engine: Engine) -> None:
    require_image(engine, bash.PACK)
    require_image(engine, node.PACK)


async def wait_gone(engine: Engine, container: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while container in engine.containers():
        assert time.monotonic() < deadline, f"container {container[:12]} was not removed"
        await asyncio.sleep(0.05)


def container_of(session: object) -> str:
    guest = session._guest  # type: ignore[attr-defined]
    assert guest is not None
    return str(guest.container)


async def test_bash_state_persists(sandbox: Sandbox) -> None:
    async with await sandbox.new_session("bash") as session:
        assert (await session.eval("x=41; inc() { echo $((x + $1)); }; cd /tmp")).stdout == b""
        result = await session.eval("inc 1; pwd; echo oops >&2; false")
        assert (result.stdout, result.stderr, result.exit_code) == (b"42\n/tmp\n", b"oops\n", 1)
        assert result.backend == "docker" and not result.restarted
        assert (await session.eval("alias hi='echo hello'")).exit_code == 0
        assert (await session.eval("hi")).stdout == b"hello\n"


async def test_bash_stray_break_continue_and_stdin(sandbox: Sandbox) -> None:
    async with await sandbox.new_session("bash") as session:
        assert (await session.eval("echo a; break; echo b")).stdout == b"a\n"
        assert (await session.eval("echo c; continue; echo d")).stdout == b"c\n"
        # the guest's stdin is empty: it cannot read the driver's commands
        assert (await session.eval("cat; echo end")).stdout == b"end\n"
        assert (await session.eval("echo still")).stdout == b"still\n"


async def test_node_state_and_echo(sandbox: Sandbox) -> None:
    async with await sandbox.new_session("node") as session:
        assert (await session.eval("const base = 40; function add(n) { return base + n }")).stdout == b""
        assert (await session.eval("add(2)")).stdout == b"42\n"
        result = await session.eval("console.log('hi'); ({a: [1, 'x']})")
        assert result.stdout == b"hi\n{ a: [ 1, 'x' ] }\n"
        assert (await session.eval("const os = require('os'); typeof os.cpus")).stdout == b"'function'\n"
        assert (await session.eval("Promise.resolve(6 * 7)")).stdout == b"42\n"
        error = await session.eval("throw new TypeError('boom')")
        assert error.exit_code == 1 and error.stderr.startswith(b"TypeError: boom")
        assert b"driver" not in error.stderr
        assert (await session.eval("base")).stdout == b"40\n"


def forgeries() -> list[bytes]:
    return [
        f"R00000026{FAKE_NONCE} 1 0".encode(),
        f"X00000026{FAKE_NONCE} 1 0".encode(),
        f"Y00000020{FAKE_NONCE}".encode(),
        b"O00000003abc",
        b"C 99 3\nfoo",
        b"\n" + f"R{FAKE_NONCE}".encode(),
    ]


async def test_bash_printed_control_frames_are_data(sandbox: Sandbox) -> None:
    async with await sandbox.new_session("bash") as session:
        for fake in forgeries():
            # printed by a subprocess (printf is a builtin; /usr/bin/printf a child), on both streams
            code = f"printf '%s' '{fake.decode()}'; /usr/bin/printf '%s' '{fake.decode()}' >&2; sleep 0.2; echo after"
            result = await session.eval(code)
            assert result.stdout == fake + b"after\n"
            assert result.stderr == fake
            assert result.exit_code == 0
        # The result fd is not the guest's: writing to it fails and does not end the eval.
        result = await session.eval('echo "$__pg_id 0" >&3; echo "rc=$?"; sleep 0.2; echo done')
        assert result.stdout == b"rc=1\ndone\n"
        assert (await session.eval("echo alive")).stdout == b"alive\n"


async def test_node_printed_control_frames_are_data(sandbox: Sandbox) -> None:
    async with await sandbox.new_session("node") as session:
        for fake in forgeries():
            text = fake.decode()
            code = (
                f"process.stdout.write({text!r}); require('child_process').execFileSync('printf', ['%s', {text!r}],"
                f" {{stdio: ['ignore', 'inherit', 'inherit']}}); console.error({text!r}); 'after'"
            )
            result = await session.eval(code)
            assert result.stdout == fake + fake + b"'after'\n"
            assert result.stderr == fake + b"\n"
        assert (await session.eval("1 + 1")).stdout == b"2\n"


async def test_timeout_kills_then_session_killed(sandbox: Sandbox, engine: Engine) -> None:
    session = await sandbox.new_session("bash", SessionConfig(limits=Limits(wall_time=1.0)))
    try:
        container = container_of(session)
        await session.eval("x=1")
        started = time.monotonic()
        with pytest.raises(TimeLimitExceeded) as info:
            await session.eval("echo before; while :; do :; done")
        assert time.monotonic() - started < 10
        assert info.value.result is not None and info.value.result.stdout == b"before\n"
        assert not session.alive
        with pytest.raises(SessionKilled):
            await session.eval("echo $x")
        await wait_gone(engine, container)
    finally:
        session.close()


async def test_timeout_with_auto_restart_has_fresh_state(sandbox: Sandbox) -> None:
    config = SessionConfig(limits=Limits(wall_time=1.0), auto_restart=True)
    async with await sandbox.new_session("node", config) as session:
        await session.eval("var kept = 'old'")
        with pytest.raises(TimeLimitExceeded):
            await session.eval("for (;;) {}")
        result = await session.eval("typeof kept")
        assert result.restarted and result.stdout == b"'undefined'\n"
        again = await session.eval("1")
        assert not again.restarted


async def test_output_cap_per_eval(sandbox: Sandbox) -> None:
    config = SessionConfig(limits=Limits(max_output=10_000))
    async with await sandbox.new_session("bash", config) as session:
        assert (await session.eval("head -c 9000 /dev/zero | tr '\\0' a")).stdout == b"a" * 9000
        assert len((await session.eval("head -c 9000 /dev/zero | tr '\\0' b")).stdout) == 9000  # cap is per eval
        with pytest.raises(OutputLimitExceeded) as info:
            await session.eval("yes 0123456789")
        result = info.value.result
        assert result is not None and result.truncated
        assert len(result.stdout) + len(result.stderr) == 10_000
        assert not session.alive


async def test_node_memory_limit(sandbox: Sandbox) -> None:
    config = SessionConfig(limits=Limits(memory=128 << 20))
    async with await sandbox.new_session("node", config) as session:
        with pytest.raises(MemoryLimitExceeded):
            await session.eval("const hog = []; for (;;) hog.push(Buffer.alloc(1 << 20, 1));")
        assert not session.alive


async def test_guest_exit_ends_the_session(sandbox: Sandbox) -> None:
    async with await sandbox.new_session("bash") as session:
        result = await session.eval("echo bye; exit 3")
        assert (result.stdout, result.exit_code) == (b"bye\n", 3)
        with pytest.raises(SessionKilled):
            await session.eval("echo again")


async def test_cancel_kills_the_eval(sandbox: Sandbox, engine: Engine) -> None:
    session = await sandbox.new_session("bash")
    container = container_of(session)
    task = asyncio.create_task(session.eval("sleep 60"))
    await asyncio.sleep(0.5)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 5
    await wait_gone(engine, container)
    session.close()


async def test_close_removes_the_container_and_is_idempotent(sandbox: Sandbox, engine: Engine) -> None:
    before = set(engine.containers())
    session = await sandbox.new_session("bash")
    container = container_of(session)
    assert set(engine.containers()) - before == {container}
    session.close()
    session.close()
    with pytest.raises(SessionClosed):
        await session.eval("echo hi")
    await wait_gone(engine, container)
    assert set(engine.containers()) == before


async def test_backend_close_removes_open_sessions(engine: Engine) -> None:
    backend = DockerBackend(packs=PACKS)
    sandbox = Sandbox(backends=[backend], packs=PACKS, policy=DOCKER_ONLY, default_limits=TEST_LIMITS)
    before = set(engine.containers())
    sessions = [await sandbox.new_session(lang) for lang in ("bash", "node")]
    assert len(set(engine.containers()) - before) == 2
    sandbox.close()  # returns once the containers are gone
    assert set(engine.containers()) == before
    assert all(not s.alive for s in sessions)


async def test_five_concurrent_sessions_are_isolated(sandbox: Sandbox) -> None:
    async def one(i: int) -> list[bytes]:
        lang = "bash" if i % 2 == 0 else "node"
        async with await sandbox.new_session(lang) as session:
            if lang == "bash":
                await session.eval(f"mine={i}; echo {i} > /work/f")
                out = await session.eval("sleep 0.2; echo $mine; cat /work/f; ls /work")
            else:
                await session.eval(f"const mine = {i}; require('fs').writeFileSync('/work/f', '{i}')")
                out = await session.eval("console.log(mine); require('fs').readdirSync('/work').join()")
            return [out.stdout]

    results = await asyncio.gather(*(one(i) for i in range(5)))
    for i, (stdout,) in enumerate(results):
        expected = f"{i}\n{i}\nf\n" if i % 2 == 0 else f"{i}\n'f'\n"
        assert stdout == expected.encode()


async def test_java_has_no_repl(sandbox: Sandbox, engine: Engine) -> None:
    require_image(engine, java.PACK)
    with pytest.raises(Unsupported, match="no REPL driver for java"):
        await sandbox.new_session("java")
