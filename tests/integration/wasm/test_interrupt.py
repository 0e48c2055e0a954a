"""``Session.interrupt()`` on the real runtimes: Ctrl-C without losing the interpreter's state.

JavaScript (QuickJS's interrupt handler) and Lua (a count hook) poll the
session's ``/.session/interrupt`` flag; for Python the host sets CPython's
own SIGINT words (``backends/wasm/cpython_signals.py``) and the driver
raises ``KeyboardInterrupt``. Either way an interrupted eval fails and the
session lives on. Skipped per language when its runtime is not installed
in the user cache.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from backends.wasm import WasmBackend
from playground.core import Limits, Sandbox, Session
from playground.packs import javascript, lua, python
from tests.integration.wasm.conftest import open_session

LIMITS = Limits(wall_time=20.0, cpu_time=20.0)
SET_X = {"javascript": "let x = 41", "lua": "x = 41", "python": "x = 41"}
X_PLUS_ONE = {"javascript": "x + 1", "lua": "x + 1", "python": "x + 1"}
SPIN = {"javascript": "for (;;) {}", "lua": "while true do end", "python": "while True: pass"}
#: Spins that try to swallow the interrupt.
STUBBORN = {
    "javascript": "for (;;) { try { for (;;) {} } catch (e) {} }",
    "lua": "while true do pcall(function() while true do end end) end",
    # Python's own semantics: one KeyboardInterrupt per Ctrl-C, which code may catch (tested below);
    # a sleep must end early, and C code that checks for signals must stop too.
    "python": "import time\ntime.sleep(60)",
}
#: Long enough to reach the interrupt poll many times, and what it prints.
BUSY = {
    "javascript": ("let n = 0; for (let i = 0; i < 1e6; i++) n += i; n", b"499999500000\n"),
    "lua": ("local n = 0 for i = 1, 1e6 do n = n + i end return n", b"500000500000\n"),
    "python": ("n = 0\nfor i in range(10**6): n += i\nn", b"499999500000\n"),
}
MESSAGE = {"javascript": b"InternalError: interrupted", "lua": b"stdin:1: interrupted", "python": b"KeyboardInterrupt"}
INTERRUPTIBLE = ["javascript", "lua", "python"]


@pytest.fixture(scope="module")
def real() -> Sandbox:
    return Sandbox(backends=[WasmBackend()], packs=[javascript.PACK, lua.PACK, python.PACK])


async def _session(sb: Sandbox, lang: str, opened: list[Session]) -> Session:
    return await open_session(sb, lang, opened, limits=LIMITS)


async def _interrupt_later(session: Session, delay: float = 0.2) -> bool:
    await asyncio.sleep(delay)
    return session.interrupt()


@pytest.mark.parametrize("lang", INTERRUPTIBLE)
@pytest.mark.parametrize("spin", ["plain", "stubborn"])
async def test_interrupt_stops_the_eval_and_keeps_the_state(
    real: Sandbox, open_sessions: list[Session], lang: str, spin: str
) -> None:
    session = await _session(real, lang, open_sessions)
    assert (await session.eval(SET_X[lang])).exit_code == 0
    interrupter = asyncio.create_task(_interrupt_later(session))
    started = time.monotonic()
    result = await asyncio.wait_for(session.eval(SPIN[lang] if spin == "plain" else STUBBORN[lang]), 10)
    assert await interrupter is True
    assert time.monotonic() - started < 2.0
    assert result.exit_code != 0
    assert MESSAGE[lang] in result.stderr
    assert session.alive
    again = await session.eval(X_PLUS_ONE[lang])
    assert (again.exit_code, again.stdout, again.restarted) == (0, b"42\n", False)


@pytest.mark.parametrize("lang", INTERRUPTIBLE)
async def test_an_interrupt_belongs_to_one_eval(real: Sandbox, open_sessions: list[Session], lang: str) -> None:
    session = await _session(real, lang, open_sessions)
    assert (await session.eval(SET_X[lang])).exit_code == 0
    # Nothing runs: harmless, and it does not reach the next eval.
    assert session.interrupt() is True
    result = await session.eval(X_PLUS_ONE[lang])
    assert (result.exit_code, result.stdout) == (0, b"42\n")
    # An eval interrupted late in its run: the flag is gone for the one after it.
    interrupter = asyncio.create_task(_interrupt_later(session))
    assert (await session.eval(SPIN[lang])).exit_code != 0
    await interrupter
    code, output = BUSY[lang]
    result = await session.eval(code)
    assert (result.exit_code, result.stdout) == (0, output), result.stderr


async def test_python_interrupt_is_a_keyboard_interrupt_in_the_users_code(
    real: Sandbox, open_sessions: list[Session]
) -> None:
    session = await _session(real, "python", open_sessions)
    assert (await session.eval(SET_X["python"])).exit_code == 0
    interrupter = asyncio.create_task(_interrupt_later(session))
    result = await asyncio.wait_for(session.eval("def spin():\n    while True:\n        pass\nspin()"), 10)
    assert await interrupter is True
    assert result.exit_code == 1
    lines = result.stderr.decode().splitlines()
    # The traceback points at the user's loop; neither the driver nor its handler appears in it.
    assert lines[0] == "Traceback (most recent call last):" and lines[-1] == "KeyboardInterrupt", lines
    assert 'File "<input-2>", line 4, in <module>' in lines[1] and "in spin" in result.stderr.decode()
    assert b"repl.py" not in result.stderr and b"on_sigint" not in result.stderr
    # Code may catch it, as in any Python; the session goes on with what the eval did.
    interrupter = asyncio.create_task(_interrupt_later(session))
    caught = "try:\n    while True:\n        x += 0\nexcept KeyboardInterrupt:\n    x += 1\n    print('caught')"
    result = await asyncio.wait_for(session.eval(caught), 10)
    await interrupter
    assert (result.exit_code, result.stdout, result.stderr) == (0, b"caught\n", b"")
    assert (await session.eval("x")).stdout == b"42\n"


async def test_python_interrupt_before_the_code_starts(real: Sandbox, open_sessions: list[Session]) -> None:
    """An interrupt for an eval that has not started stops it before its first statement.

    Either the eval is still queued (the flag is set when the driver takes
    it) or the driver is parsing it (the signal lands in the driver's own
    code, which must ignore it): both end in a bare ``KeyboardInterrupt``
    and never in the driver's death or a restart.
    """
    session = await _session(real, "python", open_sessions)
    assert (await session.eval(SET_X["python"])).exit_code == 0
    for _ in range(10):
        eval_task = asyncio.create_task(session.eval("x += 1\nimport time\ntime.sleep(30)"))
        await asyncio.sleep(0)  # submitted to the driver, maybe not yet taken
        assert session.interrupt() is True
        result = await asyncio.wait_for(eval_task, 10)
        assert (result.exit_code, result.restarted) == (1, False)
        # Almost always a bare KeyboardInterrupt; if the worker won the race it is the user's sleep.
        assert result.stderr.endswith(b"KeyboardInterrupt\n") and b"<string>" not in result.stderr, result.stderr
        assert result.stderr == b"KeyboardInterrupt\n" or b"time.sleep(30)" in result.stderr, result.stderr
    after = await session.eval("x")
    assert after.restarted is False and 41 <= int(after.stdout) <= 51


async def test_python_code_that_ignores_sigint_runs_on(real: Sandbox, open_sessions: list[Session]) -> None:
    """SIG_IGN is honoured: the interrupt changes nothing and the host must cancel (as the CLI does)."""
    session = await _session(real, "python", open_sessions)
    setup = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nx = 41"
    assert (await session.eval(setup)).exit_code == 0
    eval_task = asyncio.create_task(session.eval("for _ in range(30): time.sleep(0.01)\nx += 1"))
    await asyncio.sleep(0.05)
    assert session.interrupt() is True
    result = await asyncio.wait_for(eval_task, 10)
    assert (result.exit_code, result.stderr) == (0, b"")
    assert (await session.eval("x")).stdout == b"42\n"


async def test_python_code_with_its_own_sigint_handler_gets_it_called(
    real: Sandbox, open_sessions: list[Session]
) -> None:
    session = await _session(real, "python", open_sessions)
    setup = (
        "import signal\nstop = False\ndef mine(signum, frame):\n    global stop\n    stop = True\n"
        "signal.signal(signal.SIGINT, mine)"
    )
    assert (await session.eval(setup)).exit_code == 0
    interrupter = asyncio.create_task(_interrupt_later(session))
    result = await asyncio.wait_for(session.eval("while not stop: pass\nprint('my handler ran')"), 10)
    await interrupter
    assert (result.exit_code, result.stdout, result.stderr) == (0, b"my handler ran\n", b"")


async def test_python_interrupt_latency(real: Sandbox, open_sessions: list[Session]) -> None:
    """A pure-Python loop and a sleep both stop within a few epoch ticks."""
    session = await _session(real, "python", open_sessions)
    for code in ("while True: pass", "import time\ntime.sleep(60)", "sum(i * i for i in range(10**10))"):
        eval_task = asyncio.create_task(session.eval(code))
        await asyncio.sleep(0.2)
        asked = time.monotonic()
        assert session.interrupt() is True
        result = await asyncio.wait_for(eval_task, 10)
        assert result.stderr.endswith(b"KeyboardInterrupt\n"), (code, result.stderr)
        assert time.monotonic() - asked < 0.5, code


async def test_javascript_an_eval_waiting_for_a_timer_stops_at_once(
    real: Sandbox, open_sessions: list[Session]
) -> None:
    """A timer's wait runs no JavaScript, so QuickJS's interrupt handler cannot see Ctrl-C meanwhile: the driver's
    wait looks at it itself (in 20 ms slices)."""
    session = await _session(real, "javascript", open_sessions)
    code = "console.log('waiting'); await new Promise((r) => setTimeout(r, 60000))"
    eval_task = asyncio.create_task(session.eval(code))
    await asyncio.sleep(0.3)
    asked = time.monotonic()
    assert session.interrupt() is True
    result = await asyncio.wait_for(eval_task, 10)
    assert time.monotonic() - asked < 0.5
    assert result.stdout == b"waiting\n" and MESSAGE["javascript"] in result.stderr, result.stderr


@pytest.mark.parametrize(
    "code",
    ["setTimeout(function again() { setTimeout(again, 0) }, 0)", "(async () => { for (;;) await 0 })()",
     "await 0; for (;;) {}", "await new Promise((resolve) => setTimeout(resolve, 60000))",
     "setInterval(() => {}, 50)"],
)  # fmt: skip
async def test_javascript_timers_and_jobs_of_an_interrupted_eval_are_dropped(
    real: Sandbox, open_sessions: list[Session], code: str
) -> None:
    session = await _session(real, "javascript", open_sessions)
    assert (await session.eval(SET_X["javascript"])).exit_code == 0
    interrupter = asyncio.create_task(_interrupt_later(session))
    result = await asyncio.wait_for(session.eval(code), 10)
    await interrupter
    assert result.exit_code != 0 and MESSAGE["javascript"] in result.stderr
    # Nothing of it runs on in the next eval (which would spin until its time limit).
    again = await asyncio.wait_for(session.eval(X_PLUS_ONE["javascript"]), 10)
    assert (again.exit_code, again.stdout, again.stderr) == (0, b"42\n", b"")
