"""Run code from the editor against the real default sandbox: every Wasm language, Stop, /out pictures."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from playground.app.resources import resource_path
from tests.gui.conftest import Playground, save_artifact

EXPECTED = {
    "javascript": ("hello.js", ["squares: 1, 4, 9, 16, 25", "2^100 = 1267650600228229401496703205376"]),
    "typescript": ("hello.ts", ["norm = 5, color = Green"]),
    "python": ("hello.py", ['"answer": 42']),
    "lua": ("hello.lua", ["1 1 2 3 5 8 13 21 34 55", "Lua 5.4"]),
    "wasm": ("hello.wat", ["hello from a hand-written wasm module"]),
}


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_each_wasm_language_runs_from_the_editor(playground: Playground, language: str) -> None:
    example, wanted = EXPECTED[language]
    code = resource_path("examples", example).read_text(encoding="utf-8")
    output = playground.run_code(language, code, timeout=120)
    summary = playground.summary()
    for text in wanted:
        assert text in output, f"{language}: {text!r} not in output {output!r}; summary: {summary}"
    assert "exit 0" in summary and "on wasm" in summary, summary
    assert playground.controller.last_result is not None
    assert playground.controller.last_result.backend == "wasm"


def test_stderr_is_shown_apart_from_stdout(playground: Playground) -> None:
    output = playground.run_code("python", "import sys\nprint('to out')\nprint('to err', file=sys.stderr)\nsys.exit(3)")
    assert "to out" in output and "to err" in output
    assert "exit 3" in playground.summary()
    document = playground.window.output.text.document()
    colours = {text: document.find(text).charFormat().foreground().color().name() for text in ("to out", "to err")}
    assert colours["to out"] != colours["to err"]
    assert colours["to err"] == playground.window.theme().stderr


def test_stop_ends_an_infinite_loop(playground: Playground) -> None:
    window, controller = playground.window, playground.controller
    window.set_limit_texts({"wall_time": "5m", "cpu_time": "5m"})
    playground.select("javascript")
    window.set_code("let n = 0;\nfor (;;) { n++; }\n")
    before = controller.runs_finished
    window.editor.setFocus()
    playground.qtbot.keyClick(window.editor, Qt.Key.Key_F5)
    assert controller.running
    playground.qtbot.wait(1500)
    assert controller.running, "the infinite loop ended by itself: " + playground.summary()
    assert window.stop_button.isEnabled()
    pressed = time.monotonic()
    playground.qtbot.keyClick(window.editor, Qt.Key.Key_Escape)
    playground.wait_run(before, timeout=10)
    stopped_after = time.monotonic() - pressed
    print(f"\nStop took {stopped_after * 1000:.0f} ms")
    assert "Stopped by you" in playground.summary()
    assert stopped_after < 3.0
    assert window.run_button.isEnabled() and not window.stop_button.isEnabled()


def test_wall_time_limit_is_reported_in_words(playground: Playground) -> None:
    playground.window.set_limit_texts({"wall_time": "1s"})
    playground.run_code("javascript", "for (;;) {}")
    summary = playground.summary()
    assert "wall time limit (1s) was reached" in summary, summary


def test_python_example_shows_its_png_in_the_files_tab(playground: Playground) -> None:
    code = resource_path("examples", "mandelbrot_png.py").read_text(encoding="utf-8")
    output = playground.run_code("python", code, timeout=120)
    assert "wrote /out/mandelbrot.png" in output, playground.summary()
    files = playground.window.files
    assert files.current_out() == "mandelbrot.png"
    assert files.shown_kind() == "picture"
    pixmap = files.picture.original()
    assert not pixmap.isNull() and (pixmap.width(), pixmap.height()) == (240, 160)


def test_svg_in_out_is_shown_as_a_picture(playground: Playground) -> None:
    code = resource_path("examples", "bar_chart_svg.py").read_text(encoding="utf-8")
    playground.run_code("python", code, timeout=120)
    files = playground.window.files
    assert files.current_out() == "chart.svg", playground.summary()
    assert files.shown_kind() == "picture" and not files.picture.original().isNull()


def test_input_files_reach_in_and_text_output_is_previewed(playground: Playground, tmp_path: Path) -> None:
    data = tmp_path / "numbers.txt"
    data.write_text("1\n2\n3\n39\n")
    playground.controller.add_inputs([str(data)])
    assert "/in/numbers.txt" in playground.window.files.inputs.item(0).text()
    code = (
        "total = sum(int(x) for x in open('/in/numbers.txt'))\n"
        "open('/out/total.txt', 'w').write(f'total={total}\\n')\n"
        "open('/out/blob.bin', 'wb').write(bytes(range(256)))\n"
    )
    playground.run_code("python", code, timeout=120)
    files = playground.window.files
    names = [files.outputs.item(i).text().split()[0] for i in range(files.outputs.count())]
    assert names == ["blob.bin", "total.txt"], playground.summary()
    files.outputs.setCurrentRow(1)
    assert files.shown_kind() == "text" and files.text.toPlainText() == "total=45\n"
    files.outputs.setCurrentRow(0)
    assert files.shown_kind() == "info" and "binary" in files.info.text()
    saved = tmp_path / "saved.bin"
    playground.controller.save_out("blob.bin", str(saved))
    assert saved.read_bytes() == bytes(range(256))


def test_dropping_a_file_on_the_editor_opens_it_and_picks_the_language(playground: Playground, tmp_path: Path) -> None:
    script = tmp_path / "dropped.lua"
    script.write_text("print('dropped ' .. 6 * 7)\n")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(script))])
    editor = playground.window.editor
    drop = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    editor.dropEvent(drop)  # QApplication only routes a Drop during a real drag, which offscreen cannot start
    assert drop.isAccepted()
    assert playground.window.code() == "print('dropped ' .. 6 * 7)\n"
    assert playground.window.current_language() == "lua"
    assert "dropped.lua" in playground.window.windowTitle()
    output = playground.run_code("lua", playground.window.code())
    assert "dropped 42" in output, playground.summary()


def test_a_program_that_meets_what_wasm_cannot_do_gets_the_hint(playground: Playground) -> None:
    """As the CLI: a thread on the Wasm tier fails, and the pane says why and where it runs (``Sandbox.hint``)."""
    output = playground.run_code("python", "import threading\nthreading.Thread(target=print).start()")
    assert "RuntimeError: can't start new thread" in output, playground.summary()
    assert "hint: this WebAssembly Python runs one thread" in output and "Docker" in output
    save_artifact(playground.window, "wasm_thread_hint.png")
    output = playground.run_code("python", "print('fine')")
    assert "hint:" not in output
