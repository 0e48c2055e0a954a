"""Concurrency in the Wasm Pythons: asyncio works from every start; threads and processes get a hint.

asyncio (``playground/packs/python_shims.py``):

Before, every event loop failed as it was made (WASI has no socketpair for
its self-pipe): ``asyncio.run(main())`` raised ``OSError: [Errno 58]`` before
``main`` ran. The program below exercises what a one-thread loop has:
timers, tasks, a queue, a timeout, ``call_soon_threadsafe`` from the loop's
own thread, a second loop after the first closed; a signal handler is
refused as on Windows. Each start is tried: the plain snapshot (no asyncio
among its imports: the program is run as ``exec`` of a string), the asyncio
snapshot, a cold start (an environment variable CPython reads at start-up),
a caller's root, the scientific runtime's snapshot, and REPL sessions, where
Ctrl-C stops a loop that sleeps.

Threads and processes cannot start in a WebAssembly guest: the failure is
the program's own, and the hint (``WasmSpec.cannot``, ``Sandbox.hint``)
says why and that the Docker tier runs it, on the CLI, in sessions and in
the window (``run_controller``), instead of offering a PyPI package for a
standard module.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from backends.wasm import WasmBackend
from playground.core import Limits, Sandbox, Session, Spec, TimeLimitExceeded
from playground.core.variants import snapshot_for
from playground.packs import python
from tests.integration.wasm.conftest import need_runtime, need_scientific, open_session

LIMITS = Limits(wall_time=30.0, cpu_time=30.0)

PROGRAM = """\
import asyncio, signal, time

async def value_after(i):
    await asyncio.sleep(0.05 * i)
    return i

async def main():
    started = time.monotonic()
    print(await asyncio.gather(*(value_after(i) for i in range(4))), time.monotonic() - started >= 0.15)
    queue = asyncio.Queue()

    async def produce():
        for i in range(3):
            await queue.put(i)
        await queue.put(None)

    async def consume():
        got = []
        while (item := await queue.get()) is not None:
            got.append(item)
        return got

    print(await asyncio.gather(produce(), consume()))
    try:
        await asyncio.wait_for(asyncio.sleep(10), 0.1)
    except TimeoutError:
        print("timed out")
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    loop.call_soon_threadsafe(future.set_result, "woken")
    print(await future)
    try:
        loop.add_signal_handler(signal.SIGTERM, print)
    except NotImplementedError as exc:
        print("no signal handler:", "WASI" in str(exc))

asyncio.run(main())
print("again", asyncio.run(value_after(0)))
"""
EXPECTED = b"[0, 1, 2, 3] True\n[None, [0, 1, 2]]\ntimed out\nwoken\nno signal handler: True\nagain 0\n"


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(backends=[WasmBackend()], packs=[python.PACK], default_limits=LIMITS) as sandbox:
        need_runtime(sandbox, "python")
        yield sandbox


@pytest.mark.parametrize(
    ("start", "spec"),
    [
        ("plain snapshot", {"code": f"exec({PROGRAM!r})"}),
        ("asyncio snapshot", {"code": PROGRAM}),
        ("cold start", {"code": PROGRAM, "env": {"PYTHONDONTWRITEBYTECODE": "1"}}),
        ("caller's root", {"code": PROGRAM, "root_files": {"work/data.txt": b"x"}}),
    ],
)
async def test_asyncio_run_works_from_every_start_of_the_light_runtime(
    sb: Sandbox, start: str, spec: dict[str, object]
) -> None:
    full = Spec(lang="python", **spec)  # type: ignore[arg-type]
    light = python.PACK.wasm
    assert light is not None
    expected_snapshot = {"plain snapshot": light.snapshot, "asyncio snapshot": light.import_snapshots[0]}
    if start in expected_snapshot:
        assert snapshot_for(light, full.code) is expected_snapshot[start]
    result = await sb.run(full)
    assert (result.exit_code, result.stdout, result.stderr) == (0, EXPECTED, b""), (start, result.stderr[-2000:])


async def test_a_program_that_does_not_use_asyncio_does_not_import_it(sb: Sandbox) -> None:
    """The shim is a finder: nothing of asyncio is imported until the program imports it."""
    code = "import sys\nprint(sorted(m for m in sys.modules if m.startswith('asyncio')))"
    result = await sb.run(Spec(lang="python", code=code))
    assert (result.exit_code, result.stdout) == (0, b"[]\n"), result.stderr


async def test_a_sleeping_event_loop_is_stopped_by_the_time_limit(sb: Sandbox) -> None:
    code = "import asyncio\nasyncio.run(asyncio.sleep(60))"
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded):
        await sb.run(Spec(lang="python", code=code, limits=Limits(wall_time=0.5)))
    assert time.monotonic() - started < 5


async def test_asyncio_in_the_scientific_runtime() -> None:
    with Sandbox(backends=[WasmBackend()], packs=[python.PACK], default_limits=LIMITS) as sandbox:
        need_scientific(sandbox)
        result = await sandbox.run(Spec(lang="python", code="import numpy\n" + PROGRAM))
    assert result.backend == "wasm"
    assert (result.exit_code, result.stdout, result.stderr) == (0, EXPECTED, b""), result.stderr[-2000:]


@pytest.mark.parametrize("snapshot", [True, False], ids=["session snapshot", "cold session"])
async def test_asyncio_in_a_session_and_ctrl_c_stops_a_sleeping_loop(
    sb: Sandbox, open_sessions: list[Session], snapshot: bool
) -> None:
    env = {} if snapshot else {"PYTHONDONTWRITEBYTECODE": "1"}  # read at start-up: the session starts cold
    session = await open_session(sb, "python", open_sessions, limits=LIMITS, env=env)
    result = await session.eval(PROGRAM)
    assert (result.exit_code, result.stdout, result.stderr) == (0, EXPECTED, b""), result.stderr[-2000:]

    async def interrupt_later() -> bool:
        await asyncio.sleep(0.3)
        return session.interrupt()

    interrupter = asyncio.create_task(interrupt_later())
    started = time.monotonic()
    result = await asyncio.wait_for(session.eval("asyncio.run(asyncio.sleep(60))"), 10)
    assert await interrupter is True and time.monotonic() - started < 3
    assert result.exit_code == 1 and result.stderr.decode().splitlines()[-1] == "KeyboardInterrupt"
    result = await session.eval("print(asyncio.run(value_after(0)))")  # the session goes on, loops too
    assert (result.exit_code, result.stdout) == (0, b"0\n"), result.stderr


#: Programs that start a thread or a process, the message they fail with and the hint's start.
CANNOT = [
    (
        "import threading\nthreading.Thread(target=print).start()",
        b"can't start new thread",
        "this WebAssembly Python runs one thread",
    ),
    (
        "from concurrent.futures import ThreadPoolExecutor\nThreadPoolExecutor().submit(print)",
        b"No module named 'concurrent.futures.thread'",
        "concurrent.futures' ThreadPoolExecutor is in Python's standard library but not in this WebAssembly build",
    ),
    (
        "import asyncio\nasyncio.run(asyncio.to_thread(print))",
        b"concurrent.futures.thread",
        "concurrent.futures' Thread",
    ),
    (
        "import subprocess\nsubprocess.run(['ls'])",
        b"wasi does not support processes",
        "this WebAssembly Python cannot start processes",
    ),
    ("import multiprocessing", b"No module named 'multiprocessing'", "multiprocessing is in Python's standard library"),
]


@pytest.mark.parametrize(
    ("code", "error", "hint"), CANNOT, ids=["thread", "executor", "to_thread", "subprocess", "multiprocessing"]
)
async def test_a_thread_or_a_process_fails_with_a_hint_that_names_docker(
    sb: Sandbox, code: str, error: bytes, hint: str
) -> None:
    spec = Spec(lang="python", code=code)
    result = await sb.run(spec)
    assert result.exit_code == 1 and error in result.stderr, result.stderr[-2000:]
    said = sb.hint(spec, result)
    assert said is not None and said.startswith(hint) and "--policy docker-only" in said and "--pip" not in said


async def test_a_session_input_that_starts_a_thread_gets_the_hint(sb: Sandbox, open_sessions: list[Session]) -> None:
    session = await open_session(sb, "python", open_sessions, limits=LIMITS)
    result = await session.eval("import threading\nthreading.Thread(target=print).start()")
    assert result.exit_code == 1
    assert (session.hint(result) or "").startswith("this WebAssembly Python runs one thread")


def test_the_cli_prints_the_hint(sb: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    from playground.cli import main

    code = "import threading\nthreading.Thread(target=print).start()"
    assert main(["run", "--policy", "wasm-only", "-l", "python", "-e", code]) == 1
    err = capsys.readouterr().err
    assert "RuntimeError: can't start new thread" in err
    assert "playground: hint: this WebAssembly Python runs one thread" in err and "--policy docker-only" in err
