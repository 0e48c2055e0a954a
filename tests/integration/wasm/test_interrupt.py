"""``Session.interrupt()`` on the real runtimes: Ctrl-C without losing the interpreter's state.

JavaScript (QuickJS's interrupt handler) and Lua (a count hook) poll the
session's ``/.session/interrupt`` flag, so an interrupted eval fails and
the session lives on. Python's driver does not poll (see
``resources/drivers/repl.py``): ``interrupt()`` says so and changes nothing.
Skipped per language when its runtime is not installed in the user cache.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from backends.wasm import WasmBackend
from playground.core import Limits, Sandbox, Session, SessionConfig
from playground.packs import javascript, lua, python

LIMITS = Limits(wall_time=20.0, cpu_time=20.0)
SET_X = {"javascript": "let x = 41", "lua": "x = 41", "python": "x = 41"}
X_PLUS_ONE = {"javascript": "x + 1", "lua": "x + 1", "python": "x + 1"}
SPIN = {"javascript": "for (;;) {}", "lua": "while true do end", "python": "while True: pass"}
#: Spins that try to swallow the interrupt.
STUBBORN = {
    "javascript": "for (;;) { try { for (;;) {} } catch (e) {} }",
    "lua": "while true do pcall(function() while true do end end) end",
}
#: Long enough to reach the interrupt poll many times, and what it prints.
BUSY = {
    "javascript": ("let n = 0; for (let i = 0; i < 1e6; i++) n += i; n", b"499999500000\n"),
    "lua": ("local n = 0 for i = 1, 1e6 do n = n + i end return n", b"500000500000\n"),
}
MESSAGE = {"javascript": b"InternalError: interrupted", "lua": b"stdin:1: interrupted"}
INTERRUPTIBLE = ["javascript", "lua"]


@pytest.fixture(scope="module")
def real() -> Sandbox:
    return Sandbox(backends=[WasmBackend()], packs=[javascript.PACK, lua.PACK, python.PACK])


@pytest.fixture
async def open_sessions() -> AsyncIterator[list[Session]]:
    sessions: list[Session] = []
    yield sessions
    for session in sessions:
        session.close()


async def _session(sb: Sandbox, lang: str, opened: list[Session]) -> Session:
    reason = sb.backends["wasm"].unavailable_reason(sb.pack(lang))
    if reason is not None:
        pytest.skip(reason)
    session = await sb.new_session(lang, SessionConfig(limits=LIMITS))
    opened.append(session)
    return session


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


async def test_python_cannot_be_interrupted_in_place(real: Sandbox, open_sessions: list[Session]) -> None:
    session = await _session(real, "python", open_sessions)
    assert (await session.eval(SET_X["python"])).exit_code == 0
    eval_task = asyncio.create_task(session.eval("import time\nfor _ in range(20): time.sleep(0.01)\nx += 1"))
    await asyncio.sleep(0.05)
    assert session.interrupt() is False  # the CLI then cancels the eval and restarts
    result = await eval_task  # nothing was changed: the eval runs to its end
    assert result.exit_code == 0
    assert (await session.eval("x")).stdout == b"42\n"


@pytest.mark.parametrize(
    "code",
    ["setTimeout(function again() { setTimeout(again, 0) }, 0)", "(async () => { for (;;) await 0 })()",
     "await 0; for (;;) {}"],
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
