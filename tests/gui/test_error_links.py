"""Errors lead to the code (issue #17): in the window, a place an error names is a link to the editor's line.

A real Python guest on Wasm (offscreen): its traceback names the editor's
file, the spans become links, the lines are marked in the editor's
gutter, and clicking a link (a real mouse click on the output pane)
moves the editor's cursor there. A screenshot goes to
``tests/artifacts/error_link_clicked.png``.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor

from playground.app.error_links import parse_href
from tests.gui.conftest import Playground, save_artifact

PROGRAM = (
    "def divide(a, b):\n"
    "    return a / b\n"
    "\n"
    "print('dividing')\n"
    "divide(1, 0)\n"
)


def link_point(pg: Playground, needle: str) -> QPoint:
    """The viewport point in the middle of the first occurrence of ``needle`` in the output pane."""
    text = pg.window.output.text
    start = text.toPlainText().index(needle)
    cursor = QTextCursor(text.document())
    cursor.setPosition(start + len(needle) // 2)
    return text.cursorRect(cursor).center()


def test_clicking_a_traceback_line_moves_the_editor_cursor_there(playground: Playground, tmp_path: Path) -> None:
    pg = playground
    source = tmp_path / "divide.py"
    source.write_text(PROGRAM)
    pg.controller.open_file(str(source))
    assert pg.window.current_language() == "python"
    output = pg.run_code("python", PROGRAM, timeout=120)
    assert 'File "/work/divide.py", line 5' in output, output  # the editor's file name, not main.py
    links = pg.window.error_links
    pg.qtbot.waitUntil(lambda: not links.pending, timeout=5_000)
    assert [(loc.line, loc.file) for loc in links.locations] == [(5, "divide.py"), (2, "divide.py")]
    assert pg.window.editor.marked_lines() == {5, 2}

    editor = pg.window.editor
    editor.moveCursor(QTextCursor.MoveOperation.Start)
    viewport = pg.window.output.text.viewport()
    point = link_point(pg, 'File "/work/divide.py", line 2')
    assert parse_href(pg.window.output.text.anchorAt(point)) == (2, None)
    pg.qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=point)
    assert editor.textCursor().blockNumber() + 1 == 2
    assert editor.textCursor().block().text() == "    return a / b"
    assert editor.hasFocus()
    save_artifact(pg.window, "error_link_clicked.png")

    pg.qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=link_point(pg, 'File "/work/divide.py", line 5'))
    assert editor.textCursor().blockNumber() + 1 == 5

    # Plain output is not a link; editing the code clears the marks (the lines moved).
    before = editor.textCursor().blockNumber()
    pg.qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=link_point(pg, "ZeroDivisionError"))
    assert editor.textCursor().blockNumber() == before
    editor.insertPlainText("# a new line\n")
    assert editor.marked_lines() == frozenset()


def test_the_first_error_line_is_scrolled_into_view_in_the_editor(playground: Playground) -> None:
    pg = playground
    code = "".join(f"x{i} = {i}\n" for i in range(120)) + "print(x0)\nundefined_name\n"
    pg.window.resize(1000, 600)
    pg.run_code("python", code, timeout=120)
    pg.qtbot.waitUntil(lambda: not pg.window.error_links.pending, timeout=5_000)
    editor = pg.window.editor
    assert editor.marked_lines() == {122}
    first = editor.firstVisibleBlock().blockNumber()
    shown = editor.viewport().height() // editor.fontMetrics().height()
    assert first <= 121 < first + shown, (first, shown)
