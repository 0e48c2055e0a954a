"""What no tier of Python can do gets a hint that says so; the scientific runtime's left-out modules get theirs.

A window (tkinter, turtle, pygame) needs a display and a full-screen
terminal program (curses) a terminal; neither Wasm Python has the modules,
and the Docker tier's container has neither a display nor a terminal. The
hint used to send tkinter and curses programs to the Docker tier ("can run
this program"), where they fail too, and turtle and pygame programs to a
package (``Pack.nowhere``, ``Sandbox.hint``). The Docker side is in
``tests/integration/docker/test_python_pack.py``.

The scientific runtime (CPython 3.15) words a standard module its build
left out as "Standard library module 'X' was not found", which matched none
of the markers written for 3.12's "No module named 'X'": ``import ssl``
there got no hint at all (``python.NOT_THERE``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.wasm import WasmBackend
from playground.core import Limits, Sandbox, Session, Spec
from playground.packs import python
from tests.integration.wasm.conftest import need_runtime, need_scientific, open_session

LIMITS = Limits(wall_time=30.0, cpu_time=30.0)


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(backends=[WasmBackend()], packs=[python.PACK], default_limits=LIMITS) as sandbox:
        need_runtime(sandbox, "python")
        yield sandbox


NOWHERE = [
    ("import tkinter\ntkinter.Tk()", python.NO_WINDOW),
    ("import turtle\nturtle.forward(10)", python.NO_WINDOW),
    ("import pygame\npygame.init()", python.NO_WINDOW),
    ("import curses\ncurses.initscr()", python.NO_TERMINAL),
]


@pytest.mark.parametrize("runtime", ["light", "scientific"])
@pytest.mark.parametrize(("code", "hint"), NOWHERE, ids=["tkinter", "turtle", "pygame", "curses"])
async def test_a_window_or_a_terminal_gets_a_hint_that_names_no_tier(
    sb: Sandbox, runtime: str, code: str, hint: str
) -> None:
    if runtime == "scientific":
        need_scientific(sb)
        code = "import numpy\n" + code  # picks the scientific runtime
    spec = Spec(lang="python", code=code)
    result = await sb.run(spec)
    assert result.exit_code == 1 and b"ModuleNotFoundError" in result.stderr, result.stderr[-2000:]
    assert sb.hint(spec, result) == hint


async def test_a_session_input_that_opens_a_window_gets_the_hint(sb: Sandbox, open_sessions: list[Session]) -> None:
    session = await open_session(sb, "python", open_sessions, limits=LIMITS)
    result = await session.eval("import turtle")
    assert result.exit_code == 1
    assert session.hint(result) == python.NO_WINDOW


@pytest.mark.parametrize(("module", "name"), [("ssl", "ssl"), ("readline", "readline")])
async def test_the_scientific_runtimes_left_out_modules_get_their_hint(sb: Sandbox, module: str, name: str) -> None:
    need_scientific(sb)
    spec = Spec(lang="python", code=f"import numpy\nimport {module}")
    result = await sb.run(spec)
    assert b"Standard library module '" in result.stderr, result.stderr[-2000:]
    said = sb.hint(spec, result) or ""
    assert said.startswith(f"{name} is in Python's standard library but not in this WebAssembly build"), said
    assert "--policy docker-only" in said and "--pip" not in said


def test_the_cli_prints_the_hint(sb: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    from playground.cli import main

    assert main(["run", "--policy", "wasm-only", "-l", "python", "-e", "import turtle"]) == 1
    err = capsys.readouterr().err
    assert f"playground: hint: {python.NO_WINDOW}" in err and "docker-only" not in err


@pytest.mark.parametrize("runtime", ["light", "scientific"])
async def test_the_guest_has_a_user_and_a_host_name(sb: Sandbox, runtime: str) -> None:
    """WASI has no user database (no ``pwd``): ``getpass.getuser()`` finds the name in the environment, as
    after a login (``python_boot.GUEST_ENV``); it failed with ModuleNotFoundError. ``socket.gethostname()``
    is the Docker tier's container's (the light build has none: AttributeError), and the attempt report's
    own patch of ``socket`` still reports a connection (two patchers of one module recursed)."""
    if runtime == "scientific":
        need_scientific(sb)
    code = ("import numpy\n" if runtime == "scientific" else "") + (
        "import getpass, os, socket, email.utils\n"
        "print(getpass.getuser(), os.path.expanduser('~'), socket.gethostname(), socket.getfqdn())\n"
        "print(email.utils.make_msgid().endswith('@sandbox>'))\n"
        "try:\n    socket.create_connection(('example.com', 80))\nexcept OSError as e:\n    print(e.errno)\n"
    )
    result = await sb.run(Spec(lang="python", code=code))
    assert result.stdout == b"user /home/user sandbox sandbox\nTrue\n52\n", result.stderr
    assert [(a.kind.value, a.target) for a in result.attempts] == [("network_connect", "example.com:80")]
