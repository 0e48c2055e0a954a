"""Issue #17: a program running from the window reads what the user types under the output pane.

Real default sandbox (Python on Wasm): ``input()`` waits, the line editor
says so and takes the focus; a typed line is echoed and answered; Ctrl+D is
end of input; a stdin text is the whole stdin of the next run.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.gui.conftest import Playground, save_artifact

GREET = (
    'name = input("What is your name? ")\n'
    'print(f"Hello, {name}!")\n'
    "try:\n"
    '    more = input("Anything else? ")\n'
    "except EOFError:\n"
    '    print("(end of input)")\n'
)


def start(playground: Playground, language: str, code: str) -> int:
    playground.select(language)
    playground.window.set_code(code)
    before = playground.controller.runs_finished
    playground.window.editor.setFocus()
    playground.qtbot.keyClick(playground.window.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert playground.controller.running, playground.summary()
    return before


def test_typing_answers_input_in_a_running_program(playground: Playground) -> None:
    window, qtbot = playground.window, playground.qtbot
    line = window.input_line.line
    assert not line.isEnabled()  # nothing runs: nowhere to type to
    before = start(playground, "python", GREET)
    keyboard = window.input_line.keyboard
    assert keyboard is not None
    qtbot.waitUntil(lambda: keyboard.waiting, timeout=120_000)
    qtbot.waitUntil(lambda: "What is your name? " in window.output.plain_text(), timeout=10_000)
    qtbot.waitUntil(lambda: "waiting for input" in line.placeholderText(), timeout=5_000)
    assert line.isEnabled() and playground.controller.running
    qtbot.keyClicks(line, "Ada")
    save_artifact(window, "input_line_typing.png")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "Hello, Ada!" in window.output.plain_text(), timeout=10_000)
    assert line.text() == ""
    qtbot.waitUntil(lambda: "Anything else? " in window.output.plain_text(), timeout=10_000)
    qtbot.keyClick(line, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)  # end of input
    playground.wait_run(before, timeout=30)
    output = window.output.plain_text()
    # The typed line is echoed where a terminal shows it, before the program's answer.
    assert "What is your name? Ada\nHello, Ada!\nAnything else? (end of input)" in output, output
    assert "exit 0" in playground.summary(), playground.summary()
    assert not line.isEnabled()
    save_artifact(window, "input_line_done.png")


def test_stop_ends_a_program_waiting_for_input(playground: Playground) -> None:
    window, qtbot = playground.window, playground.qtbot
    before = start(playground, "python", GREET)
    keyboard = window.input_line.keyboard
    assert keyboard is not None
    qtbot.waitUntil(lambda: keyboard.waiting, timeout=120_000)
    qtbot.keyClick(window.editor, Qt.Key.Key_Escape)
    playground.wait_run(before, timeout=10)
    assert "Stopped by you" in playground.summary()
    assert keyboard.closed and not window.input_line.line.isEnabled()


def test_the_stdin_text_is_the_whole_stdin(playground: Playground) -> None:
    window = playground.window
    window.input_line.stdin_button.click()
    assert window.input_line.stdin_text.isVisible()
    window.input_line.stdin_text.setPlainText("3\n4\n5\n")
    code = "import sys\nnumbers = sys.stdin.read().split()\nprint(sum(map(int, numbers)))"
    output = playground.run_code("python", code)
    assert output.strip().endswith("12"), output
    assert window.input_line.keyboard is None
    save_artifact(window, "input_line_stdin_text.png")
