"""Issue #17: a program on the Wasm tier reads what the user types (``input=``), in runs, REPLs and the CLI.

Real runtimes from the user cache (skipped per language when missing):
``input()`` in Python, ``io.read()`` in Lua, ``readStdin()`` in JavaScript.
The CLI is driven through a pseudo-terminal as a user would type.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.wasm import WasmBackend, cache_root
from playground.core import (
    CPUTimeLimitExceeded,
    InputStream,
    Limits,
    Sandbox,
    Session,
    Spec,
    TimeLimitExceeded,
)
from playground.packs import javascript, lua, python
from tests.integration.wasm.conftest import need_runtime, open_session
from tests.integration.wasm.test_repl_cli import REPO, Terminal

GREET = 'name = input("Name? ")\nprint(f"Hello, {name}!")\n'
GREET_THEN_EOF = GREET + 'try:\n    input("More? ")\nexcept EOFError:\n    print("EOF, bye")\n'


@pytest.fixture(scope="module")
def real() -> Iterator[Sandbox]:
    with Sandbox(backends=[WasmBackend()], packs=[javascript.PACK, lua.PACK, python.PACK]) as sb:
        yield sb


def type_later(stream: InputStream, *steps: bytes | None, delay: float = 0.3) -> threading.Thread:
    """Write each step after ``delay`` seconds (None: Ctrl-D), like a user at the keyboard."""

    def typist() -> None:
        for step in steps:
            time.sleep(delay)
            if step is None:
                stream.close()
            else:
                stream.write(step)

    thread = threading.Thread(target=typist, daemon=True)
    thread.start()
    return thread


# -- one-shot runs -------------------------------------------------------------------------------


async def test_python_reads_a_typed_line_then_end_of_input(real: Sandbox) -> None:
    need_runtime(real, "python")
    keyboard = InputStream()
    type_later(keyboard, b"Alice\n", None)
    result = await real.run(Spec(lang="python", code=GREET_THEN_EOF), input=keyboard)
    assert result.stdout == b"Name? Hello, Alice!\nMore? EOF, bye\n", result.stderr
    assert result.exit_code == 0


async def test_spec_stdin_comes_first_then_the_keyboard(real: Sandbox) -> None:
    need_runtime(real, "lua")
    keyboard = InputStream()
    type_later(keyboard, b"typed\n", None)
    code = "for line in io.lines() do print('[' .. line .. ']') end"
    result = await real.run(Spec(lang="lua", code=code, stdin=b"piped\n"), input=keyboard)
    assert result.stdout == b"[piped]\n[typed]\n"


async def test_javascript_reads_the_keyboard_to_its_end(real: Sandbox) -> None:
    need_runtime(real, "javascript")
    keyboard = InputStream()
    type_later(keyboard, b"one\n", b"two\n", None, delay=0.1)
    result = await real.run(Spec(lang="js", code="console.log(JSON.stringify(readStdin()))"), input=keyboard)
    assert result.stdout == b'"one\\ntwo\\n"\n', result.stderr


JS_GREET = """
const rl = require('readline').createInterface({ input: process.stdin, output: process.stdout });
rl.question('Name? ', (name) => {
  console.log(`Hello, ${name}!`);
  console.log(`next year: ${Number(prompt('Age? ')) + 1}`);
  rl.on('line', (line) => console.log('line:', line));
  rl.on('close', () => console.log('bye'));
});
"""


async def test_javascript_reads_the_keyboard_a_line_at_a_time_as_under_node(real: Sandbox) -> None:
    need_runtime(real, "javascript")
    keyboard = InputStream()
    seen: list[tuple[float, bytes]] = []
    typist = type_later(keyboard, b"Ada\n", b"36\n", b"x\n", None, delay=0.4)
    result = await real.run(Spec(lang="js", code=JS_GREET), input=keyboard,
                            on_output=lambda _stream, data: seen.append((time.monotonic(), data)))
    typist.join()
    assert result.stdout == b"Name? Hello, Ada!\nAge? next year: 37\nline: x\nbye\n", result.stderr
    assert seen[0][1] == b"Name? "  # the prompt shows before the first line is typed, not at the end
    assert seen[-1][0] - seen[0][0] > 1.0


async def test_javascript_readline_promises_and_for_await(real: Sandbox) -> None:
    need_runtime(real, "javascript")
    code = """
import * as readline from 'node:readline/promises';
const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
const n = Number(await rl.question('How many? '));
let total = 0;
for (let i = 0; i < n; i++) total += Number(await rl.question(`#${i + 1}: `));
console.log('total', total);
for await (const line of readline.createInterface({ input: process.stdin })) console.log('rest:', line);
console.log(prompt('after the end? '));
"""
    keyboard = InputStream()
    typist = type_later(keyboard, b"2\n3\n", b"4\nmore\r\n", None, delay=0.2)
    result = await real.run(Spec(lang="js", code=code, main_file="main.mjs"), input=keyboard)
    typist.join()
    assert result.stdout == b"How many? #1: #2: total 7\nrest: more\nafter the end? null\n", result.stderr


async def test_javascript_session_reads_a_line_with_prompt(real: Sandbox, open_sessions: list[Session]) -> None:
    session = await open_session(real, "javascript", open_sessions)
    keyboard = InputStream()
    typist = type_later(keyboard, b"Grace\n", b"left over\n", delay=0.2)
    result = await session.eval("const who = prompt('Who? '); 'Hi ' + who", input=keyboard)
    typist.join()
    assert result.stdout == b"Who? Hi Grace\n", result.stderr
    assert (await session.eval("prompt('again? ')")).stdout == b"again? null\n"  # no keyboard: end of input


async def test_a_blocked_read_meets_the_wall_time_limit_and_costs_no_cpu_time(real: Sandbox) -> None:
    need_runtime(real, "python")
    limits = Limits(wall_time=1.5, cpu_time=0.5)
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded) as info:
        await real.run(Spec(lang="python", code=GREET, limits=limits), input=InputStream())
    waited = time.monotonic() - started
    # Waiting three times the CPU budget is not charged: the wall time stops it, not the CPU time.
    assert not isinstance(info.value, CPUTimeLimitExceeded) and info.value.limit == "wall_time"
    assert 1.4 <= waited < 4.0, waited
    assert info.value.result is not None and info.value.result.stdout == b"Name? "


async def test_cancel_stops_a_blocked_read_promptly(real: Sandbox) -> None:
    need_runtime(real, "python")
    keyboard = InputStream()
    task = asyncio.ensure_future(real.run(Spec(lang="python", code=GREET), input=keyboard))
    deadline = time.monotonic() + 20
    while not keyboard.waiting and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert keyboard.waiting, "the guest never waited for the keyboard"
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 1.0


async def test_without_a_keyboard_stdin_ends_at_once(real: Sandbox) -> None:
    need_runtime(real, "python")
    result = await real.run(Spec(lang="python", code=GREET_THEN_EOF.replace("name = input", "name = 'x' or input")))
    assert result.stdout.endswith(b"More? EOF, bye\n")


# -- REPL sessions -----------------------------------------------------------------------------------


async def test_python_session_input_reads_a_line_per_eval(real: Sandbox, open_sessions: list[Session]) -> None:
    session = await open_session(real, "python", open_sessions, limits=Limits(wall_time=10))
    keyboard = InputStream()
    type_later(keyboard, b"Alice\nleft over\n")
    result = await session.eval('name = input("Name? ")', input=keyboard)
    assert result.stdout == b"Name? " and result.exit_code == 0, result.stderr
    assert (await session.eval("name")).stdout == b"'Alice'\n"
    # What was typed for one eval never reaches the next; without a keyboard input() is end of file.
    result = await session.eval("input()")
    assert b"EOFError" in result.stderr and result.exit_code == 1


async def test_python_session_ctrl_c_while_waiting_keeps_the_state(real: Sandbox, open_sessions: list[Session]) -> None:
    session = await open_session(real, "python", open_sessions, limits=Limits(wall_time=10))
    await session.eval("x = 41")
    keyboard = InputStream()
    task = asyncio.ensure_future(session.eval('input("? ")', input=keyboard))
    deadline = time.monotonic() + 10
    while not keyboard.waiting and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert session.interrupt()
    result = await asyncio.wait_for(task, 5)
    assert b"KeyboardInterrupt" in result.stderr and result.exit_code == 1
    assert (await session.eval("x + 1")).stdout == b"42\n"


async def test_session_wait_for_input_meets_the_eval_wall_time(real: Sandbox, open_sessions: list[Session]) -> None:
    session = await open_session(real, "lua", open_sessions, limits=Limits(wall_time=1.0))
    with pytest.raises(TimeLimitExceeded):
        await session.eval("print(io.read())", input=InputStream())


async def test_lua_session_reads_the_keyboard(real: Sandbox, open_sessions: list[Session]) -> None:
    session = await open_session(real, "lua", open_sessions, limits=Limits(wall_time=10))
    keyboard = InputStream()
    type_later(keyboard, b"Ada\n", None)
    result = await session.eval('name = io.read(); print("Hello, " .. name); print(io.read())', input=keyboard)
    assert result.stdout == b"Hello, Ada\nnil\n", result.stderr


async def test_javascript_session_reads_the_keyboard_up_to_ctrl_d(real: Sandbox, open_sessions: list[Session]) -> None:
    session = await open_session(real, "javascript", open_sessions, limits=Limits(wall_time=10))
    keyboard = InputStream()
    type_later(keyboard, b"Ada\n", b"Grace\n", None)
    code = 'console.log("Names?"); const names = readStdin().split("\\n").filter(Boolean); names.length'
    result = await session.eval(code, input=keyboard)
    # The prompt is flushed before the read waits; the read returns at Ctrl-D.
    assert result.stdout == b"Names?\n2\n" and result.exit_code == 0, result.stderr
    assert keyboard.delivered == len(b"Ada\nGrace\n")
    assert (await session.eval("names.join('+')")).stdout == b"Ada+Grace\n"
    # fs.readFileSync(0) is the same stdin; what was typed for one eval never reaches the next,
    # and without a keyboard stdin ends at once.
    keyboard = InputStream()
    type_later(keyboard, b"Linus\n", None)
    result = await session.eval("console.log(JSON.stringify(require('fs').readFileSync(0, 'utf8')))", input=keyboard)
    assert result.stdout == b'"Linus\\n"\n', result.stderr
    assert (await session.eval("JSON.stringify(readStdin())")).stdout == b'""\n'


async def test_javascript_session_prompt_shows_while_the_read_waits(
    real: Sandbox, open_sessions: list[Session]
) -> None:
    session = await open_session(real, "javascript", open_sessions, limits=Limits(wall_time=10))
    keyboard = InputStream()
    seen: list[bytes] = []
    task = asyncio.ensure_future(
        session.eval('print("Name?"); const who = readStdin().trim(); print("Hello, " + who)',
                     input=keyboard, on_output=lambda stream, data: seen.append(data))
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while not keyboard.waiting and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert keyboard.waiting, "the eval never waited for the keyboard"
    await asyncio.sleep(0.2)
    assert b"".join(seen) == b"Name?\n"
    keyboard.write(b"Ada\n")
    await asyncio.sleep(0.2)
    assert not task.done(), "the read must wait for Ctrl-D"
    keyboard.close()
    result = await asyncio.wait_for(task, 5)
    assert result.stdout == b"Name?\nHello, Ada\n" and result.exit_code == 0, result.stderr


async def test_javascript_session_ctrl_c_while_waiting_keeps_the_state(
    real: Sandbox, open_sessions: list[Session]
) -> None:
    session = await open_session(real, "javascript", open_sessions, limits=Limits(wall_time=10))
    await session.eval("var x = 41")
    keyboard = InputStream()
    task = asyncio.ensure_future(session.eval("readStdin()", input=keyboard))
    deadline = time.monotonic() + 10
    while not keyboard.waiting and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert session.interrupt()
    result = await asyncio.wait_for(task, 5)
    assert result.exit_code == 1 and b"interrupted" in result.stderr, result.stderr
    assert (await session.eval("x + 1")).stdout == b"42\n"


async def test_javascript_session_wait_for_input_meets_the_eval_wall_time(
    real: Sandbox, open_sessions: list[Session]
) -> None:
    session = await open_session(real, "javascript", open_sessions, limits=Limits(wall_time=1.0, cpu_time=0.3))
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded) as info:
        await session.eval("readStdin()", input=InputStream())
    assert not isinstance(info.value, CPUTimeLimitExceeded) and info.value.limit == "wall_time"
    assert 0.9 <= time.monotonic() - started < 5


# -- the CLI: a terminal is the keyboard, piped stdin is read whole -----------------------------------


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "TERM": "dumb",
        "PLAYGROUND_CACHE_DIR": str(cache_root()),
        "PYTHONPATH": str(REPO),
    }


@pytest.fixture
def greet_file(tmp_path: Path, real: Sandbox) -> Path:
    need_runtime(real, "python")
    path = tmp_path / "greet.py"
    path.write_text(GREET_THEN_EOF)
    return path


def test_run_in_a_terminal_reads_the_keyboard(greet_file: Path, tmp_path: Path) -> None:
    t = Terminal([sys.executable, "-m", "playground.cli", "run", "--policy", "wasm-only", str(greet_file)],
                 _env(tmp_path))  # fmt: skip
    try:
        t.expect(r"Name\? ")
        t.line("Alice")
        t.expect(r"Hello, Alice!\n")
        t.expect(r"More\? ")
        t.type("\x04")  # Ctrl-D: end of input
        t.expect(r"EOF, bye\n")
    finally:
        code = t.close()
    assert code == 0


def test_javascript_repl_in_a_terminal_reads_the_keyboard(real: Sandbox, tmp_path: Path) -> None:
    need_runtime(real, "javascript")
    env = {**_env(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    t = Terminal([sys.executable, "-m", "playground.cli", "repl", "javascript", "--timeout", "20s"], env)
    try:
        t.expect(r">>> ")
        t.line('print("Name?"); const who = readStdin().trim()')
        t.expect(r"Name\?\n")
        t.line("Ada")
        time.sleep(0.3)
        t.type("\x04")  # Ctrl-D: end of this input's stdin, not of the REPL
        t.expect(r">>> ")
        t.line("'Hello, ' + who")
        t.expect(r"Hello, Ada\n>>> ")
        t.line(":quit")
    finally:
        code = t.close()
    assert code == 0


def test_ctrl_c_stops_a_run_waiting_for_the_keyboard(greet_file: Path, tmp_path: Path) -> None:
    t = Terminal([sys.executable, "-m", "playground.cli", "run", "--policy", "wasm-only", str(greet_file)],
                 _env(tmp_path))  # fmt: skip
    try:
        t.expect(r"Name\? ")
        time.sleep(0.3)
        t.type("\x03")
        t.expect(r"playground: interrupted")
    finally:
        code = t.close()
    assert code == 130


def test_piped_stdin_still_works(greet_file: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "playground.cli", "run", "--policy", "wasm-only", str(greet_file)],
        input=b"Bob\n", capture_output=True, env=_env(tmp_path), cwd=REPO, timeout=120, check=False,
    )  # fmt: skip
    assert proc.stdout == b"Name? Hello, Bob!\nMore? EOF, bye\n", proc.stderr
    assert proc.returncode == 0
