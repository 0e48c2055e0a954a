"""The REPL pane: state across evals, history, multi-line input; the reason when no session is possible."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.gui.conftest import Playground, save_artifact


def submit(playground: Playground, code: str) -> None:
    repl = playground.window.repl
    repl.input.setPlainText(code)
    repl.input.setFocus()
    playground.qtbot.keyClick(repl.input, Qt.Key.Key_Return)
    playground.qtbot.waitUntil(lambda: not playground.controller.repl.busy, timeout=60_000)
    assert not repl.input.isReadOnly()


def test_python_session_keeps_state_across_two_evals(playground: Playground) -> None:
    """A real Wasm CPython session: ``x = 41`` then ``x + 1`` shows 42; history, reset, limits used."""
    playground.select("python")
    playground.window.show_tab("repl")
    repl = playground.window.repl
    assert playground.controller.sandbox.status("python").backend == "wasm"
    submit(playground, "x = 41")
    transcript = repl.transcript_text()
    assert "No REPL" not in transcript, transcript
    assert "session running on wasm" in repl.status.text(), repl.status.text()
    submit(playground, "x + 1")
    assert repl.transcript_text().split(">>> x + 1")[-1].strip() == "42", repl.transcript_text()
    status = repl.status.text()
    assert "last eval:" in status and "of 10s wall time" in status and "memory" in status, status
    submit(playground, "def f(n):\n    return x + n\n")
    submit(playground, "f(1)")
    transcript = repl.transcript_text()
    assert ">>> x = 41" in transcript and "42" in transcript.split(">>> f(1)")[-1], transcript
    assert repl.input.history == ["x = 41", "x + 1", "def f(n):\n    return x + n\n", "f(1)"]
    playground.qtbot.keyClick(repl.input, Qt.Key.Key_Up)
    assert repl.input.toPlainText() == "f(1)"
    playground.qtbot.keyClick(repl.input, Qt.Key.Key_Down)
    assert repl.input.toPlainText() == ""
    repl.reset_button.click()
    playground.qtbot.waitUntil(lambda: "session reset" in repl.transcript_text(), timeout=60_000)
    submit(playground, "print(x)")
    assert "NameError" in repl.transcript_text().split(">>> print(x)")[-1]


def test_a_session_that_imports_numpy_later_is_told_to_start_a_new_one(playground: Playground) -> None:
    playground.select("python")
    repl = playground.window.repl
    submit(playground, "x = 1")
    submit(playground, "import numpy")
    after = repl.transcript_text().split(">>> import numpy")[-1]
    assert "ModuleNotFoundError" in after and "hint: numpy is in python's scientific runtime" in after, after
    assert "reset the session (or start a new one) and make 'import numpy' its first input" in after, after
    repl.reset_button.click()  # as the hint says: the reset session's first input picks its runtime
    playground.qtbot.waitUntil(lambda: "session reset" in repl.transcript_text(), timeout=60_000)
    submit(playground, "import numpy as np\nprint(np.arange(4).sum())\n")
    moved = repl.transcript_text().split("np.arange(4)")[-1]
    assert "\n6\n" in moved and "Error" not in moved, moved


def test_python_output_streams_while_the_eval_runs(playground: Playground) -> None:
    playground.select("python")
    repl = playground.window.repl
    submit(playground, "import time")
    repl.input.setPlainText("for i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.6)\n")
    playground.qtbot.keyClick(repl.input, Qt.Key.Key_Return)
    playground.qtbot.waitUntil(lambda: "tick 0" in repl.transcript_text(), timeout=30_000)
    assert playground.controller.repl.busy and "tick 2" not in repl.transcript_text()  # shown mid-eval
    playground.qtbot.waitUntil(lambda: not playground.controller.repl.busy, timeout=30_000)
    after = repl.transcript_text().split("time.sleep(0.6)")[-1]
    assert [line for line in after.splitlines() if line.strip(". ")] == ["tick 0", "tick 1", "tick 2"], after


def test_shift_enter_inserts_a_newline_instead_of_submitting(playground: Playground) -> None:
    repl = playground.window.repl
    submitted: list[str] = []
    repl.input.submitted.connect(submitted.append)
    repl.input.setEnabled(True)
    repl.input.setPlainText("if True:")
    repl.input.moveCursor(repl.input.textCursor().MoveOperation.End)
    playground.qtbot.keyClick(repl.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert repl.input.toPlainText() == "if True:\n" and submitted == []


def test_a_language_that_cannot_run_shows_the_reason_in_the_pane(playground: Playground) -> None:
    sandbox = playground.controller.sandbox
    playground.qtbot.waitUntil(lambda: not any(sandbox.status(n).checking for n in sandbox.languages()), timeout=30_000)
    blocked = [name for name in sandbox.languages() if sandbox.status(name).backend is None]
    if not blocked:
        return  # every language runs here: nothing to explain
    playground.select(blocked[0])
    status = playground.window.repl.status.text()
    assert status.startswith("No REPL:") and "cannot run here" in status


def test_repl_flow_with_a_scripted_session_backend(qtbot: QtBot, qloop: object, settings_file: Path) -> None:
    """The pane's own logic (state, restart notice, reset) with the core's scripted session backend.

    Scripted, so restarts, interrupts and the timing of streamed output are
    deterministic; the tests above use real Wasm sessions.
    """
    from playground.core import Pack, Sandbox, WasmSpec
    from tests.fake_backend import FakeSessionBackend
    from tests.gui.conftest import make_playground

    pack = Pack(name="script", extensions=(".script",), wasm=WasmSpec(module=None))
    pg = make_playground(qtbot, settings_file, Sandbox(backends=[FakeSessionBackend("wasm")], packs=[pack]))
    try:
        repl = pg.window.repl
        assert pg.window.current_language() == "script"
        assert repl.input.isEnabled() and "first input" in repl.status.text()
        submit(pg, "set x 41")
        submit(pg, "get x")
        assert "41" in repl.transcript_text().split(">>> get x")[-1]
        repl.input.setPlainText("get x\nsleep 1\nset x 42\nget x")  # output streams before the eval ends
        qtbot.keyClick(repl.input, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: repl.transcript_text().endswith("... get x\n41\n"), timeout=5_000)
        assert pg.controller.repl.busy
        qtbot.waitUntil(lambda: not pg.controller.repl.busy, timeout=5_000)
        assert repl.transcript_text().endswith("... get x\n41\n42\n"), repl.transcript_text()
        assert "last eval:" in repl.status.text()
        submit(pg, "die")
        submit(pg, "get x")
        after = repl.transcript_text().split(">>> get x")[-1]
        assert "restarted" in after and "<unset>" in after
        repl.input.setPlainText("sleep 30")
        qtbot.keyClick(repl.input, Qt.Key.Key_Return)
        qtbot.wait(200)
        assert pg.controller.repl.busy and repl.input.line_mode  # typing goes to the eval's stdin now
        qtbot.keyClick(repl.input, Qt.Key.Key_Escape)
        qtbot.waitUntil(lambda: "interrupted" in repl.transcript_text(), timeout=5_000)
        qtbot.waitUntil(lambda: not pg.controller.repl.busy and not repl.input.line_mode, timeout=5_000)
        submit(pg, "set y 1")
        repl.reset_button.click()
        qtbot.waitUntil(lambda: "session reset" in repl.transcript_text(), timeout=10_000)
        submit(pg, "get y")
        assert "<unset>" in repl.transcript_text().split(">>> get y")[-1]
    finally:
        pg.window.close()
        pg.wait(pg.controller.shutdown())


@pytest.mark.parametrize(
    ("lang", "keep", "spin"),
    [("javascript", "var kept = 41", "for (;;) {}"), ("python", "kept = 41", "while True: pass")],
)
def test_escape_interrupts_a_spin_and_keeps_state(playground: Playground, lang: str, keep: str, spin: str) -> None:
    """Esc during an endless loop stops it in place (Wasm QuickJS, CPython): the next input still sees ``kept``."""
    playground.select(lang)
    playground.window.show_tab("repl")
    repl = playground.window.repl
    submit(playground, keep)
    repl.input.setPlainText(spin)
    playground.qtbot.keyClick(repl.input, Qt.Key.Key_Return)
    playground.qtbot.waitUntil(lambda: playground.controller.repl.busy, timeout=5_000)
    playground.qtbot.wait(300)
    playground.qtbot.keyClick(repl.input, Qt.Key.Key_Escape)
    playground.qtbot.waitUntil(lambda: not playground.controller.repl.busy, timeout=5_000)
    transcript = repl.transcript_text()
    assert "interrupted: the interpreter kept its state" in transcript, transcript
    submit(playground, "kept + 1")
    after = repl.transcript_text().split("kept + 1")[-1]
    assert "42" in after and "restarted" not in after, repl.transcript_text()
    save_artifact(playground.window, f"repl_interrupt_{lang}.png")


def test_input_in_the_repl_reads_what_is_typed_in_the_pane(playground: Playground) -> None:
    """Issue #17: ``input()`` in a REPL eval waits for a line typed in the pane's input, echoed; state is kept."""
    playground.select("python")
    playground.window.show_tab("repl")
    repl, qtbot = playground.window.repl, playground.qtbot
    repl.input.setPlainText('name = input("Name? ")')
    repl.input.setFocus()
    qtbot.keyClick(repl.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: repl.keyboard is not None and repl.keyboard.waiting, timeout=120_000)
    qtbot.waitUntil(lambda: repl.transcript_text().endswith("Name? "), timeout=10_000)
    assert playground.controller.repl.busy and not repl.input.isReadOnly()
    assert "input()" in repl.input.placeholderText()
    qtbot.keyClicks(repl.input, "Ada")
    save_artifact(playground.window, "repl_input_typing.png")
    qtbot.keyClick(repl.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not playground.controller.repl.busy, timeout=30_000)
    assert repl.transcript_text().endswith('>>> name = input("Name? ")\nName? Ada\n'), repl.transcript_text()
    assert repl.input.history[-1] == 'name = input("Name? ")'  # the answer is not code: not in the history
    submit(playground, 'print(f"Hello, {name}!")')
    assert repl.transcript_text().split(">>> print")[-1].splitlines()[-1] == "Hello, Ada!", repl.transcript_text()
    # Ctrl+D: end of input, as in a terminal.
    repl.input.setPlainText('try:\n    input("More? ")\nexcept EOFError:\n    print("(end of input)")\n')
    qtbot.keyClick(repl.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: repl.keyboard is not None and repl.keyboard.waiting, timeout=30_000)
    qtbot.keyClick(repl.input, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not playground.controller.repl.busy, timeout=30_000)
    assert repl.transcript_text().rstrip().endswith("More? (end of input)"), repl.transcript_text()
    save_artifact(playground.window, "repl_input_done.png")


def test_javascript_repl_reads_what_is_typed_in_the_pane(playground: Playground) -> None:
    """Issue #17: ``readStdin()`` in a JavaScript (Wasm) REPL eval reads the lines typed in the pane, up to Ctrl+D."""
    playground.select("javascript")
    playground.window.show_tab("repl")
    repl, qtbot = playground.window.repl, playground.qtbot
    repl.input.setPlainText('print("Names?"); const names = readStdin().split("\\n").filter(Boolean)')
    repl.input.setFocus()
    qtbot.keyClick(repl.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: repl.keyboard is not None and repl.keyboard.waiting, timeout=120_000)
    qtbot.waitUntil(lambda: repl.transcript_text().endswith("Names?\n"), timeout=10_000)
    for name in ("Ada", "Grace"):
        qtbot.keyClicks(repl.input, name)
        qtbot.keyClick(repl.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: repl.transcript_text().endswith("Grace\n"), timeout=10_000)
    assert playground.controller.repl.busy  # the read waits for the end of input
    qtbot.keyClick(repl.input, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not playground.controller.repl.busy, timeout=30_000)
    submit(playground, "names.join('+')")
    assert repl.transcript_text().rstrip().endswith("Ada+Grace"), repl.transcript_text()
    save_artifact(playground.window, "repl_input_javascript.png")
