"""REPL sessions on the real runtimes (QuickJS, Lua, CPython) over our WASI.

Skipped per language when its runtime is not installed in the user cache
(``python packaging/runtimes/install.py``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from backends.wasm import HostFailure, WasmBackend
from playground.core import (
    FSQuotaExceeded,
    Limits,
    MemoryLimitExceeded,
    OutputLimitExceeded,
    Pack,
    Sandbox,
    Session,
    SessionClosed,
    SessionKilled,
    SessionManager,
    TimeLimitExceeded,
    Unsupported,
    WasmSpec,
)
from playground.core.limits import MiB
from playground.packs import javascript, lua, python
from tests.integration.wasm.conftest import WASM_PACK, install_artifact, need_runtime, open_session

PACKS = [javascript.PACK, lua.PACK, python.PACK]
LANGS = ["javascript", "lua", "python"]
SPIN = {"javascript": "for (;;) {}", "lua": "while true do end", "python": "while True: pass"}
FLOOD = {
    "javascript": 'for (;;) console.log("x".repeat(1000))',
    "lua": 'while true do print(string.rep("x", 1000)) end',
    "python": 'while True: print("x" * 1000)',
}
SET_X = {"javascript": "globalThis.x = 41", "lua": "x = 41", "python": "x = 41"}
X_PLUS_ONE = {"javascript": "x + 1", "lua": "x + 1", "python": "x + 1"}


@pytest.fixture(scope="module")
def real() -> Sandbox:
    return Sandbox(backends=[WasmBackend()], packs=PACKS)  # the user's cache, where install.py puts runtimes




async def _out(session: Session, code: str) -> str:
    result = await session.eval(code)
    assert result.exit_code == 0, result.stderr
    return result.stdout.decode()


# -- state and echo ------------------------------------------------------------------------


async def test_python_state_persists(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "python", open_sessions)
    assert await _out(s, "import json\nx = 20") == ""
    assert await _out(s, "def double(n):\n    return n * 2") == ""
    assert await _out(s, "print(json.dumps({'v': double(x) + 2}))") == '{"v": 42}\n'
    assert await _out(s, "double(x) + 2") == "42\n"
    assert await _out(s, "_ + 1") == "43\n"  # the interactive interpreter's _


async def test_python_echo_is_like_the_interactive_interpreter(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "python", open_sessions)
    assert await _out(s, "'text'") == "'text'\n"  # repr
    assert await _out(s, "None") == ""
    assert await _out(s, "1\n2\n3") == "3\n"  # only the last expression statement
    assert await _out(s, "y = 5") == ""
    assert await _out(s, "if y:\n    y") == ""  # not a top-level expression statement
    assert await _out(s, "[i * i for i in range(4)]") == "[0, 1, 4, 9]\n"


async def test_python_errors_go_to_stderr_and_the_session_lives_on(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "python", open_sessions)
    await _out(s, "def boom():\n    raise ValueError('nope')")
    result = await s.eval("boom()")
    assert result.exit_code == 1 and result.stdout == b""
    err = result.stderr.decode()
    assert err.startswith("Traceback (most recent call last):\n") and err.endswith("ValueError: nope\n")
    assert "repl" not in err and "_driver" not in err  # no driver frames
    result = await s.eval("def broken(:")
    assert result.exit_code == 1 and b"SyntaxError" in result.stderr
    assert await _out(s, "6 * 7") == "42\n"
    result = await s.eval("input()")  # stdin carries frames: user code sees end of file
    assert b"EOFError" in result.stderr


async def test_javascript_state_persists(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "javascript", open_sessions)
    assert await _out(s, "const base = 40") == ""
    assert await _out(s, "let counter = 0") == ""
    assert await _out(s, "function add(n) { counter++; return base + n }") == ""
    assert await _out(s, "add(2)") == "42\n"
    assert await _out(s, "class Point { constructor(x) { this.x = x } }") == ""
    assert await _out(s, "[add(1), counter, new Point(3)]") == "[ 41, 2, Point { x: 3 } ]\n"
    result = await s.eval("base = 1")  # const stays const across evals
    assert result.exit_code == 1 and b"TypeError" in result.stderr


async def test_javascript_echo_and_async(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "javascript", open_sessions)
    assert await _out(s, "'text'") == "text\n"  # like console.log
    assert await _out(s, "({a: 1, b: 'two'})") == "{ a: 1, b: 'two' }\n"
    assert await _out(s, "undefined") == ""
    assert await _out(s, "console.log('hi'); 7") == "hi\n7\n"
    assert await _out(s, "await new Promise((r) => setTimeout(() => r('later'), 50))") == "later\n"
    result = await s.eval("throw new RangeError('bad')")
    assert result.exit_code == 1 and result.stderr.startswith(b"Uncaught RangeError: bad")
    result = await s.eval("Promise.reject(new Error('lost')); 1")
    assert result.exit_code == 1 and b"Uncaught (in promise) Error: lost" in result.stderr
    assert await _out(s, "2") == "2\n"  # a reported rejection is not reported again


async def test_lua_state_persists(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "lua", open_sessions)
    assert await _out(s, "count = 40") == ""
    assert await _out(s, "function bump(n) count = count + n return count end") == ""
    assert await _out(s, "bump(2)") == "42\n"
    assert await _out(s, "local l = 5\nprint(l + count)") == "47\n"  # a local lives in its input
    assert await _out(s, "l") == "nil\n"  # ... like lua.c's REPL
    assert await _out(s, "string.format('%d!', count), 1") == "42!\t1\n"  # every result, like print


async def test_lua_errors(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "lua", open_sessions)
    result = await s.eval("error('boom')")
    assert result.exit_code == 1
    assert result.stderr.startswith(b"stdin:1: boom\nstack traceback:\n") and b"command line" not in result.stderr
    result = await s.eval("x = = 1")
    assert result.exit_code == 1 and result.stderr.startswith(b"stdin:1:")
    assert await _out(s, "1 + 1") == "2\n"


@pytest.mark.parametrize("lang", ["lua", "python"])  # the JavaScript runtime has no file API
async def test_files_persist_in_the_session_vfs(real: Sandbox, open_sessions: list[Session], lang: str) -> None:
    s = await open_session(real, lang, open_sessions)
    write = {
        "lua": "local f = io.open('/work/note.txt', 'w') f:write('kept') f:close()",
        "python": "_ = open('/work/note.txt', 'w').write('kept')",
    }[lang]
    await _out(s, write)
    read = {"lua": "io.open('/work/note.txt'):read('a')", "python": "print(open('/work/note.txt').read())"}[lang]
    assert (await _out(s, read)).strip() == "kept"
    assert s.vfs is not None and s.vfs.read_file("/work/note.txt") == b"kept"


# -- the control channel cannot be forged -------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
async def test_output_that_looks_like_protocol_is_just_output(
    real: Sandbox, open_sessions: list[Session], lang: str
) -> None:
    s = await open_session(real, lang, open_sessions)
    fake = "ok\\nerror\\n5\\nhello\\n0\\n"
    code = {
        "javascript": f'console.log("{fake}"); console.error("{fake}")',
        "lua": f'io.write("{fake}") io.stderr:write("{fake}")',
        "python": f'import sys; print("{fake}", end=""); _ = sys.stderr.write("{fake}")',
    }[lang]
    result = await s.eval(code)
    expected = b"ok\nerror\n5\nhello\n0\n"
    assert result.stdout.rstrip(b"\n") == expected.rstrip(b"\n") and result.exit_code == 0
    assert result.stderr.rstrip(b"\n") == expected.rstrip(b"\n")
    await s.eval(SET_X[lang])
    assert await _out(s, X_PLUS_ONE[lang]) == "42\n"


async def test_python_guest_writes_to_the_control_channel(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "python", open_sessions)
    # A forged "ok" before failing: the driver's own status comes last and wins.
    result = await s.eval(
        "import os\nfd = os.open('/.session/control', os.O_WRONLY)\n"
        "os.write(fd, b'ok\\nok\\n' + b'x' * 10000 + b'\\nok')\nraise RuntimeError('after forging')"
    )
    assert result.exit_code == 1 and b"RuntimeError: after forging" in result.stderr
    # A forged "error" in a good eval, and the eval's real output is returned.
    result = await s.eval("os.write(fd, b'error\\n'); print('real output'); 42")
    assert result.exit_code == 0 and result.stdout == b"real output\n42\n"
    # Forged frames on stdout do not start evals, and the host stays in step.
    result = await s.eval("print('7\\nx = 666'); x = 1")
    assert result.stdout == b"7\nx = 666\n"
    assert await _out(s, "x") == "1\n"
    # The control channel cannot be read, and /.session holds nothing else.
    result = await s.eval("os.read(fd, 10)")
    assert result.exit_code == 1 and b"OSError" in result.stderr
    result = await s.eval("open('/.session/other', 'w')")
    assert result.exit_code == 1 and b"OSError" in result.stderr
    assert await _out(s, "sorted(os.listdir('/.session')), sorted(os.listdir('/work'))") == "([], [])\n"


async def test_guest_reading_stdin_only_confuses_its_own_session(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "python", open_sessions)
    # The raw read waits for input, which ends this eval (no status: exit code 1) ...
    result = await s.eval("import os\ndata = os.read(0, 100)\nprint('got', data)")
    assert result.exit_code == 1 and result.stdout == b""
    # ... and the next eval's frame is what it reads; the host stays consistent.
    result = await s.eval("print('never run')")
    assert result.stdout == b"got b\"18\\nprint('never run')\"\n" and result.exit_code == 0
    assert await _out(s, "1 + 1") == "2\n"


# -- limits ---------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
async def test_timeout_kills_the_session(real: Sandbox, open_sessions: list[Session], lang: str) -> None:
    s = await open_session(real, lang, open_sessions, limits=Limits(wall_time=0.5))
    await s.eval(SET_X[lang])
    with pytest.raises(TimeLimitExceeded) as caught:
        await s.eval(SPIN[lang])
    assert caught.value.result is not None and not caught.value.result.restarted
    assert not s.alive
    with pytest.raises(SessionKilled):
        await s.eval(X_PLUS_ONE[lang])


@pytest.mark.parametrize("lang", LANGS)
async def test_auto_restart_gives_fresh_state(real: Sandbox, open_sessions: list[Session], lang: str) -> None:
    s = await open_session(real, lang, open_sessions, limits=Limits(wall_time=0.5), auto_restart=True)
    await s.eval(SET_X[lang])
    assert await _out(s, X_PLUS_ONE[lang]) == "42\n"
    with pytest.raises(TimeLimitExceeded):
        await s.eval(SPIN[lang])
    result = await s.eval(X_PLUS_ONE[lang])
    assert result.restarted and result.exit_code == 1  # x is gone
    result = await s.eval("1 + 1")
    assert result.stdout == b"2\n" and not result.restarted


async def test_each_eval_has_its_own_wall_time(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "lua", open_sessions, limits=Limits(wall_time=0.4))
    # Three evals of 0.25 s each: more than the limit together, each within it.
    for _ in range(3):
        await _out(s, "local t = os.clock() while os.clock() - t < 0.25 do end")
    await asyncio.sleep(0.5)  # idle time is not eval time
    assert await _out(s, "1") == "1\n"


async def test_idle_session_costs_no_deadline(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "javascript", open_sessions, limits=Limits(wall_time=0.2, cpu_time=0.2))
    await asyncio.sleep(0.6)
    assert await _out(s, "'still here'") == "still here\n"


@pytest.mark.parametrize("lang", LANGS)
async def test_output_cap_is_per_eval(real: Sandbox, open_sessions: list[Session], lang: str) -> None:
    s = await open_session(real, lang, open_sessions, limits=Limits(max_output=50_000))
    loop = {
        "javascript": 'for (let i = 0; i < 30; i++) console.log("y".repeat(999))',
        "lua": 'for i = 1, 30 do print(string.rep("y", 999)) end',
        "python": 'for i in range(30): print("y" * 999)',
    }[lang]
    for _ in range(3):  # 30 kB each: fine every time, though 90 kB in total
        result = await s.eval(loop)
        assert len(result.stdout) == 30_000 and not result.truncated
    with pytest.raises(OutputLimitExceeded) as caught:
        await s.eval(FLOOD[lang])
    assert caught.value.result is not None and len(caught.value.result.stdout) == 50_000
    assert caught.value.result.truncated and not s.alive


@pytest.mark.parametrize("lang", LANGS)
async def test_memory_exhaustion(real: Sandbox, open_sessions: list[Session], lang: str) -> None:
    grow = {
        "javascript": "let a = []; for (;;) a.push(new Array(1e6).fill(1.5));",
        "lua": 't = {} while true do t[#t + 1] = string.rep("x", 1 << 20) .. #t end',
        "python": "a = []\nwhile True: a.append(bytearray(1 << 20))",
    }[lang]
    s = await open_session(real, lang, open_sessions, limits=Limits(memory=64 * MiB))
    with pytest.raises(MemoryLimitExceeded):
        await s.eval(grow)
    assert not s.alive


async def test_a_big_refused_allocation_is_a_memory_limit(real: Sandbox, open_sessions: list[Session]) -> None:
    # The refusal is recorded exactly (memlimit), so even one huge request far from the limit
    # counts: a limit was hit, and like every limit it kills the session.
    s = await open_session(real, "python", open_sessions, limits=Limits(memory=64 * MiB))
    with pytest.raises(MemoryLimitExceeded) as info:
        await s.eval("x = 1\nbytearray(1 << 30)")
    assert info.value.result is not None and b"MemoryError" in info.value.result.stderr
    with pytest.raises(SessionKilled):
        await s.eval("x")


async def test_max_evals(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "lua", open_sessions, max_evals=2)
    await s.eval("a = 1")
    await s.eval("a = 2")
    with pytest.raises(SessionKilled):
        await s.eval("a")


@pytest.mark.parametrize("lang", LANGS)
async def test_cancel_mid_eval_stops_promptly(real: Sandbox, open_sessions: list[Session], lang: str) -> None:
    s = await open_session(real, lang, open_sessions, limits=Limits(wall_time=30))
    task = asyncio.create_task(s.eval(SPIN[lang]))
    await asyncio.sleep(0.3)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    latency = time.monotonic() - cancelled_at
    print(f"{lang} session cancel latency: {latency * 1000:.1f} ms")
    assert latency < 2.0
    assert not s.alive
    with pytest.raises(SessionKilled):
        await s.eval("1")


async def test_close_during_an_eval(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "lua", open_sessions, limits=Limits(wall_time=30))
    task = asyncio.create_task(s.eval(SPIN["lua"]))
    await asyncio.sleep(0.2)
    s.close()
    with pytest.raises(SessionClosed):
        await task
    s.close()  # idempotent
    with pytest.raises(SessionClosed):
        await s.eval("1")


# -- many sessions --------------------------------------------------------------------------


async def test_idle_sessions_are_reaped(real: Sandbox) -> None:
    need_runtime(real, "lua")
    async with SessionManager(real, idle_timeout=0.3, reap_interval=0.1) as manager:
        session = await manager.create("lua")
        await session.eval("x = 1")
        await asyncio.sleep(0.8)
        assert manager.count() == 0
        with pytest.raises(SessionClosed):
            await session.eval("x")


async def test_fifty_concurrent_sessions(real: Sandbox) -> None:
    need_runtime(real, "lua")
    need_runtime(real, "javascript")
    async with SessionManager(real, max_sessions=50) as manager:
        langs = ["lua" if i % 2 else "javascript" for i in range(50)]
        sessions = await asyncio.gather(*(manager.create(lang) for lang in langs))
        assert manager.count() == 50
        await asyncio.gather(*(s.eval(f"n = {i}" if s.lang == "lua" else f"var n = {i}") for i, s in
                               enumerate(sessions)))  # fmt: skip
        results = await asyncio.gather(*(s.eval("n * 2") for s in sessions))
        assert [r.stdout for r in results] == [f"{i * 2}\n".encode() for i in range(50)]


async def test_no_thread_leak_over_a_hundred_sessions(real: Sandbox) -> None:
    need_runtime(real, "lua")
    warm = await real.new_session("lua")  # the engine's ticker thread exists from here on
    await warm.eval("1")
    warm.close()
    before = threading.active_count()
    for i in range(100):
        session = await real.new_session("lua")
        if i % 10 == 0:
            await session.eval("x = 1")
        session.close()
        session.close()
    assert threading.active_count() == before, [t.name for t in threading.enumerate()]


async def test_reset_starts_fresh(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "javascript", open_sessions)
    await s.eval("var kept = 1")
    await s.reset()
    result = await s.eval("typeof kept")
    assert result.stdout == b"undefined\n"


async def test_filesystem_quota_is_a_limit(real: Sandbox, open_sessions: list[Session]) -> None:
    s = await open_session(real, "python", open_sessions, limits=Limits(fs_quota=100_000))
    await _out(s, "_ = open('/work/small', 'wb').write(b'x' * 1000)")
    with pytest.raises(FSQuotaExceeded) as caught:
        await s.eval("open('/work/big', 'wb').write(b'x' * 200_000)")
    assert caught.value.result is not None and b"OSError" in caught.value.result.stderr
    assert not s.alive


# -- start-up -------------------------------------------------------------------------------


async def test_a_driver_that_dies_at_start_is_reported(
    backend: WasmBackend, cache_dir: Path, probe_wasm: bytes
) -> None:
    artifact = install_artifact(cache_dir, "probe.wasm", probe_wasm)
    pack = Pack(name="probe", wasm=WasmSpec(module=artifact, session=lua.REPL))
    with Sandbox(backends=[backend], packs=[pack]) as sb:
        before = threading.active_count()
        with pytest.raises(HostFailure, match=r"stopped before its first prompt \(exit code 2\): unknown mode -e"):
            await sb.new_session("probe")
        assert threading.active_count() == before


async def test_packs_without_a_driver_have_no_sessions(backend: WasmBackend) -> None:
    with Sandbox(backends=[backend], packs=[WASM_PACK]) as sb:
        assert backend.session_unavailable_reason(WASM_PACK) == "wasm has no interpreter to keep alive"
        with pytest.raises(Unsupported, match="offers REPL sessions"):
            await sb.new_session("wasm")


#: Print, then stay busy for 0.6 s without printing, then print again. QuickJS's driver flushes at every
#: eighth interrupt poll, and QuickJS polls every 10,000 operations (driver.c): a loop of nothing but
#: ``Date.now()`` (a host call, ~10 us) reaches a flush only every 0.35-0.55 s, so the JavaScript loop
#: computes between its clock reads, as busy code does (the streaming of clock-bound loops is a known
#: limit of the driver, in the closing note of issue 18).
PRINT_THEN_BUSY = {
    "javascript": (
        'console.log("start"); const t0 = Date.now(); let n = 0;\n'
        "while (Date.now() - t0 < 600) { for (let i = 0; i < 200; i++) n += i; } console.log(\"end\")"
    ),
    "lua": 'print("start") local t0 = os.clock() while os.clock() - t0 < 0.6 do end print("end")',
    "python": 'import time\nprint("start")\nt0 = time.time()\nwhile time.time() - t0 < 0.6: pass\nprint("end")',
}


@pytest.mark.parametrize("lang", LANGS)
async def test_output_of_a_long_eval_streams(real: Sandbox, lang: str) -> None:
    """What an eval prints arrives while it runs (the drivers flush periodically), not only at its end."""
    need_runtime(real, lang)
    arrivals: list[tuple[float, bytes]] = []
    async with await real.new_session(lang) as session:
        started = time.monotonic()
        result = await session.eval(
            PRINT_THEN_BUSY[lang], on_output=lambda stream, data: arrivals.append((time.monotonic() - started, data))
        )
    ended = time.monotonic() - started
    assert (result.exit_code, result.stdout) == (0, b"start\nend\n"), result
    assert arrivals and arrivals[0][1].startswith(b"start"), arrivals
    assert arrivals[0][0] < 0.35 and ended >= 0.6, (arrivals, ended)


async def test_python_prints_before_a_sleep_show_before_it(real: Sandbox) -> None:
    need_runtime(real, "python")
    arrivals: list[float] = []
    async with await real.new_session("python") as session:
        started = time.monotonic()
        code = "import time\nfor i in range(3):\n    print(i)\n    time.sleep(0.25)"
        result = await session.eval(code, on_output=lambda stream, data: arrivals.append(time.monotonic() - started))
        assert result.stdout == b"0\n1\n2\n"
        assert len(arrivals) == 3 and arrivals[0] < 0.15 and arrivals[1] < 0.4, arrivals
        # time.sleep is still time.sleep to the user's code.
        named = await session.eval("time.sleep.__name__, time.sleep.__module__")
        assert named.stdout == b"('sleep', 'time')\n"


async def test_cancelling_a_slow_start_returns_at_once_and_runs_no_guest(
    real: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #17: quitting during a first start (the runtime still compiling) does not wait for the compile.

    The worker's start is delayed 1.5 s (a cold cache's compile, which cannot
    be interrupted); cancelling the start returns within a few tenths of a
    second without blocking the event loop, and the worker, once it gets
    there, refuses to run the guest.
    """
    from backends.wasm import backend as wasm_backend
    from backends.wasm import live, runner

    need_runtime(real, "lua")
    threads: list[threading.Thread] = []
    outcomes: list[BaseException | None] = []
    real_start, real_run = wasm_backend._start_worker, runner.run

    def slow_start(target: object, name: str) -> threading.Thread:
        def delayed() -> None:
            time.sleep(1.5)
            target()  # type: ignore[operator]

        thread = real_start(delayed, name)
        threads.append(thread)
        return thread

    def recording_run(*args: object) -> object:
        try:
            result = real_run(*args)  # type: ignore[arg-type]
        except BaseException as exc:
            outcomes.append(exc)
            raise
        outcomes.append(None)
        return result

    monkeypatch.setattr(wasm_backend, "_start_worker", slow_start)
    monkeypatch.setattr(live.runner, "run", recording_run)
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticking = asyncio.ensure_future(ticker())
    start = asyncio.ensure_future(real.new_session("lua"))
    await asyncio.sleep(0.2)
    assert threads and not start.done()
    cancelled_at = time.perf_counter()
    start.cancel()
    with pytest.raises(asyncio.CancelledError):
        await start
    took = time.perf_counter() - cancelled_at
    await asyncio.sleep(0.05)
    ticking.cancel()
    assert took < 0.3, f"cancelling the start took {took:.2f} s"
    assert max(gaps) < 0.1, f"the event loop was blocked {max(gaps):.2f} s"
    threads[0].join(10)
    assert not threads[0].is_alive()
    assert len(outcomes) == 1 and isinstance(outcomes[0], runner.RunCancelled), outcomes  # no guest ran
