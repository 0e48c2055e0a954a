"""``playground repl`` driven through a pseudo-terminal, as a user would type it.

Uses the real runtimes in the user cache (skipped when they are missing).
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.wasm import WasmBackend, cache_root
from playground.packs import javascript, lua, python

REPO = Path(__file__).resolve().parents[3]


#: Run first in the child's new session: make the pty its controlling terminal (so Ctrl-C sends
#: SIGINT), then exec the real command.
_TAKE_TTY = "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); os.execv(sys.argv[1], sys.argv[1:])"


#: After the echo of a typed key, before Ctrl-C: CPython's readline checks for a signal only when
#: its wait for a key is interrupted, so a SIGINT that lands between echoing a key and the next
#: wait is seen at the next key (a window of microseconds for a person, reachable by a test that
#: presses Ctrl-C the instant it reads the echo on a loaded machine).
READLINE_SETTLE = 0.2


class Terminal:
    """A child process on a pty: type lines, wait for text on the screen."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _TAKE_TTY, *argv], stdin=slave, stdout=slave, stderr=slave, env=env, cwd=REPO,
            start_new_session=True,
        )  # fmt: skip
        os.close(slave)
        self.screen = ""
        self._seen = 0

    def expect(self, pattern: str, timeout: float = 30.0) -> re.Match[str]:
        """Wait for ``pattern`` (a regex) in the output after the last match."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            found = regex.search(self.screen, self._seen)
            if found:
                self._seen = found.end()
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"did not see {pattern!r}; screen:\n{self.screen}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    data = b""
                if not data:
                    raise AssertionError(f"the REPL ended before {pattern!r}; screen:\n{self.screen}")
                self.screen += data.decode("utf-8", "replace").replace("\r\n", "\n")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def line(self, text: str) -> None:
        self.type(text + "\r")

    def close(self) -> int:
        try:
            return self.proc.wait(20)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            os.close(self.master)


@pytest.fixture
def start(tmp_path: Path) -> Iterator[object]:
    terminals: list[Terminal] = []

    def spawn(*args: str) -> Terminal:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", str(tmp_path)),
            "TERM": "dumb",
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "PLAYGROUND_CACHE_DIR": str(cache_root()),
            "PYTHONPATH": str(REPO),
        }
        terminal = Terminal([sys.executable, "-m", "playground.cli", "repl", *args], env)
        terminals.append(terminal)
        return terminal

    yield spawn
    for terminal in terminals:
        if terminal.proc.poll() is None:
            os.killpg(terminal.proc.pid, signal.SIGKILL)
            terminal.proc.wait()


def _need(*packs: object) -> None:
    backend = WasmBackend()
    for pack in packs:
        reason = backend.unavailable_reason(pack)  # type: ignore[arg-type]
        if reason is not None:
            pytest.skip(reason)


def test_lua_repl_in_a_terminal(start, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _need(lua.PACK)
    t = start("--lang", "lua", "--timeout", "20s")
    t.expect(r"Lua 5\.4.*on wasm")
    t.expect(r">>> ")
    t.line("x = 40")
    t.expect(r">>> ")
    t.line("function f(n)")
    t.expect(r"\.\.\. ")
    t.line("  return n + 2")
    t.expect(r"\.\.\. ")
    t.line("end")
    t.expect(r">>> ")
    t.line("f(x)")
    t.expect(r"\n42\n>>> ")
    t.line("error('boom')")
    t.expect(r"stdin:1: boom")
    t.expect(r">>> ")
    # Ctrl-C interrupts a running input; the interpreter keeps its state.
    t.line("while true do end")
    time.sleep(0.5)
    t.type("\x03")
    t.expect(r"stdin:1: interrupted")
    t.expect(r"KeyboardInterrupt \(the interpreter keeps its state\)")
    t.expect(r">>> ")
    t.line("x")
    t.expect(r"\n40\n>>> ")
    # Ctrl-C at the prompt just drops the line.
    time.sleep(0.3)  # readline owns the terminal once the prompt is up
    t.type("half a line")
    t.expect("half a line")
    time.sleep(READLINE_SETTLE)
    t.type("\x03")
    t.expect(r"KeyboardInterrupt\n>>> ")
    t.line(":reset")
    t.expect(r"interpreter was reset")
    t.line(":quit")
    assert t.close() == 0
    history = (tmp_path / "state" / "sandbox-playground" / "repl_history").read_text()
    assert "f(x)" in history and "while true do end" in history


def _blocks_sigint(task: Path) -> bool:
    mask = next(line for line in (task / "status").read_text().splitlines() if line.startswith("SigBlk:"))
    return bool(int(mask.split()[1], 16) & (1 << (signal.SIGINT - 1)))


def test_only_the_main_thread_takes_ctrl_c(start) -> None:  # type: ignore[no-untyped-def]
    """readline's wait for a key wakes only for a signal its own thread got: no other thread may take SIGINT."""
    _need(lua.PACK)
    t = start("--lang", "lua", "--timeout", "20s")
    t.expect(r">>> ")
    t.line("x = 1")
    t.expect(r">>> ")
    t.line("while true do end")
    time.sleep(0.5)
    t.type("\x03")
    t.expect(r"KeyboardInterrupt \(the interpreter keeps its state\)")
    t.expect(r">>> ")
    tasks = sorted(Path(f"/proc/{t.proc.pid}/task").iterdir(), key=lambda task: int(task.name))
    assert len(tasks) > 1  # the loop thread, the runtime's workers
    taking = [task.name for task in tasks if not _blocks_sigint(task)]
    assert taking == [str(t.proc.pid)]  # the main thread's id is the process id
    for _ in range(20):  # and so Ctrl-C at the prompt is answered every time
        t.type("half")
        t.expect("half")
        time.sleep(READLINE_SETTLE)
        t.type("\x03")
        t.expect(r"KeyboardInterrupt\n>>> ")
    t.line(":quit")
    assert t.close() == 0


def test_javascript_ctrl_c_keeps_the_state(start) -> None:  # type: ignore[no-untyped-def]
    _need(javascript.PACK)
    t = start("javascript", "--timeout", "20s")
    t.expect(r">>> ")
    t.line("let kept = 41")
    t.expect(r">>> ")
    t.line("for (;;) {}")
    time.sleep(0.5)
    t.type("\x03")
    t.expect(r"InternalError: interrupted")
    t.expect(r"KeyboardInterrupt \(the interpreter keeps its state\)")
    t.expect(r">>> ")
    t.line("kept + 1")
    t.expect(r"\n42\n>>> ")
    t.line(":quit")
    assert t.close() == 0
    assert "fresh interpreter" not in t.screen


def test_python_ctrl_c_keeps_the_state(start) -> None:  # type: ignore[no-untyped-def]
    _need(python.PACK)
    t = start("python", "--timeout", "20s")
    t.expect(r">>> ")
    t.line("x = 41")
    t.expect(r">>> ")
    t.line("while True: pass")
    t.expect(r"\.\.\. ")
    t.line("")
    time.sleep(0.5)
    t.type("\x03")
    t.expect(r"\nKeyboardInterrupt\n")
    t.expect(r"KeyboardInterrupt \(the interpreter keeps its state\)")
    t.expect(r">>> ")
    t.line("x + 1")
    t.expect(r"\n42\n>>> ")
    t.line(":quit")
    assert t.close() == 0
    assert "fresh interpreter" not in t.screen


def test_python_input_that_ignores_ctrl_c_is_stopped_and_restarts(start) -> None:  # type: ignore[no-untyped-def]
    _need(python.PACK)
    t = start("python", "--timeout", "20s")
    t.expect(r">>> ")
    t.line("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); x = 1")
    t.expect(r">>> ")
    t.line("while True: pass")
    t.expect(r"\.\.\. ")
    t.line("")
    time.sleep(0.5)
    t.type("\x03")  # ignored by the guest: after the grace period the interpreter is stopped
    t.expect(r"the interpreter restarts with no state \(it did not stop when interrupted\)", timeout=10)
    t.expect(r">>> ")
    t.line("x")
    t.expect(r"NameError")
    t.expect(r"a fresh interpreter ran this input")
    t.expect(r">>> ")
    t.line(":quit")
    assert t.close() == 0


def test_python_repl_blocks_and_history(start, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _need(python.PACK)
    t = start("python", "--timeout", "1s")
    t.expect(r">>> ")
    t.line("def double(n):")
    t.expect(r"\.\.\. ")
    t.line("    return n * 2")
    t.expect(r"\.\.\. ")
    t.line("")
    t.expect(r">>> ")
    t.line("double(21)")
    t.expect(r"\n42\n>>> ")
    t.line("while True: pass")
    t.expect(r"\.\.\. ")  # a compound statement ends at a blank line, as in python itself
    t.line("")
    t.expect(r"stopped, wall time limit of 1 s exceeded \[limit: wall_time\]")
    t.expect(r">>> ")
    t.line("double")
    t.expect(r"NameError")
    t.expect(r">>> ")
    t.line("import numpy")  # the session started on the light runtime and keeps it
    t.expect(r"ModuleNotFoundError")
    t.expect(r"hint: numpy is in python's scientific runtime; .* reset the session")
    t.expect(r">>> ")
    t.type("\x04")  # Ctrl-D
    assert t.close() == 0
    t2 = start("python")
    t2.expect(r">>> ")
    t2.type("\x1b[A")  # up arrow: the last line of the previous session
    t2.expect(r"import numpy")
    t2.type("\x15:quit\r")  # Ctrl-U clears the line
    assert t2.close() == 0
