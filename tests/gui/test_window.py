"""Window-level behaviour: settings, themes, zoom, restored snippets, examples, screenshots, the backends panel."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QTextLayout

from playground.app import settings as prefs_io
from playground.app.resources import resource_path
from tests.gui.conftest import Playground, save_artifact


def test_restored_snippet_is_shown_but_never_run(
    playground_factory: Callable[[], Playground], settings_file: Path
) -> None:
    store = QSettings(str(settings_file), QSettings.Format.IniFormat)
    prefs_io.save(store, prefs_io.Preferences(snippet="print('would be bad to run on start')", theme="dark"))
    del store
    pg = playground_factory()
    pg.qtbot.wait(500)
    assert pg.window.code() == "print('would be bad to run on start')"
    assert pg.controller.runs_finished == 0 and not pg.controller.running
    assert pg.window.output.plain_text() == ""
    assert pg.window.theme().name == "dark"


def test_preferences_survive_a_restart(playground_factory: Callable[[], Playground], settings_file: Path) -> None:
    first = playground_factory()
    first.controller.set_theme("dark")
    first.controller.zoom(+1)
    first.controller.zoom(+1)
    first.window.set_limit_texts({"memory": "64M", "wall_time": "3s"})
    first.controller.set_language("lua")
    first.window.set_code("-- my snippet")
    first.window.close()  # saves
    stored = QSettings(str(settings_file), QSettings.Format.IniFormat)
    assert set(stored.allKeys()) >= {"theme", "zoom", "limits", "snippet"}
    second = playground_factory()
    assert second.window.theme().name == "dark"
    assert second.window.zoom_percent() == 120  # two steps of the whole window's zoom
    assert second.window.font_size() == round(prefs_io.Preferences().font_size * 1.2)
    assert second.window.limit_texts()["memory"] == "64M" and second.window.limit_texts()["wall_time"] == "3s"
    assert second.window.code() == "-- my snippet"
    assert second.window.current_language() == "lua"


def test_only_changed_settings_are_saved(settings_file: Path) -> None:
    store = QSettings(str(settings_file), QSettings.Format.IniFormat)
    prefs_io.save(store, prefs_io.Preferences())
    assert store.allKeys() == []
    store.setValue("font_size", "huge")
    store.setValue("zoom", "big")
    assert prefs_io.load(store).font_size == prefs_io.Preferences().font_size
    assert prefs_io.load(store).zoom == prefs_io.Preferences().zoom


def test_open_and_save_a_file(playground: Playground, tmp_path: Path) -> None:
    source = tmp_path / "prog.ts"
    source.write_text("const n: number = 1;\n")
    playground.controller.open_file(str(source))
    assert playground.window.code() == "const n: number = 1;\n"
    if "typescript" in playground.controller.sandbox.languages():
        assert playground.window.current_language() == "typescript"
        assert playground.window.editor.indent == 2
    playground.window.editor.appendPlainText("console.log(n);")
    target = tmp_path / "copy.ts"
    playground.controller.save_file_as(str(target))
    saved = target.read_text()
    assert saved.startswith("const n: number = 1;\n") and saved.endswith("console.log(n);")
    assert "copy.ts" in playground.window.windowTitle()


def test_examples_menu_lists_every_language_with_an_example(playground: Playground) -> None:
    languages = {e.language for e in playground.controller.examples() if not e.group}
    groups = {e.group for e in playground.controller.examples() if e.group}
    menu_titles = {a.text() for a in playground.window.examples_menu.actions()}
    assert languages | groups == menu_titles - {"(no examples found)"}
    assert groups == {"Suspicious snippets"}
    for language in ("javascript", "typescript", "python", "lua", "wasm"):
        # wasm's example is WebAssembly text (hello.wat): it needs a pack claiming the .wat extension
        assert language in languages, f"no example for {language} (is a pack claiming its example's extension?)"
    image = [e for e in playground.controller.examples() if e.path.name == "mandelbrot_png.py"]
    playground.controller.load_example(image[0].path)
    assert "mandelbrot.png" in playground.window.code()
    assert playground.window.current_language() == "python"


def test_backends_panel_says_which_languages_run_and_why_not(playground: Playground) -> None:
    panel = playground.window.backends
    playground.qtbot.waitUntil(lambda: "Backends" in panel.rows_text(), timeout=30_000)
    text = panel.rows_text()
    sandbox = playground.controller.sandbox
    assert "wasm backend" in text or "wasm" in text
    for name in sandbox.languages():
        status = sandbox.status(name)
        line = next(line for line in text.splitlines() if line.strip().startswith(f"{name}:"))
        if status.backend is not None:
            assert f"runs on {status.backend}" in line
        else:
            assert "unavailable" in line and all(why in line for why in status.reasons.values())


def test_syntax_highlighting_happens_off_the_gui_thread(playground: Playground) -> None:
    window = playground.window
    window.set_editor_style("python3", 4)
    start = window.highlighter.lex_count
    window.set_code("def f():\n    return 'text'  # comment\n")
    playground.qtbot.waitUntil(lambda: window.highlighter.lex_count > start, timeout=5000)
    block = window.editor.document().firstBlock()

    def keyword() -> QTextLayout.FormatRange | None:  # recoloured in slices after the lex (CI once read too soon)
        return next((f for f in block.layout().formats() if f.start == 0), None)

    playground.qtbot.waitUntil(lambda: keyword() is not None, timeout=5000)
    found = keyword()
    assert found is not None and found.length == 3 and found.format.foreground().color().isValid()


def test_screenshots_in_light_and_dark(playground: Playground) -> None:
    window, controller = playground.window, playground.controller
    window.resize(1280, 800)
    code = resource_path("examples", "mandelbrot_png.py").read_text(encoding="utf-8")
    if "python" in controller.sandbox.languages():
        playground.run_code("python", code, timeout=120)
    else:
        window.set_code(code)
    window.show_tab("files")
    for theme in ("light", "dark"):
        controller.set_theme(theme)
        playground.qtbot.wait(400)  # a lex round and a repaint
        path = save_artifact(window, f"main_window_{theme}.png")
        assert path.stat().st_size > 10_000


def test_switching_theme_recolours_output_already_shown(playground: Playground) -> None:
    playground.run_code("python", "import sys\nprint('plain')\nprint('warn', file=sys.stderr)")
    document = playground.window.output.text.document()

    def colour(text: str) -> str:
        return document.find(text).charFormat().foreground().color().name()

    playground.controller.set_theme("dark")
    from playground.app.themes import DARK, LIGHT

    assert (colour("plain"), colour("warn")) == (DARK.text, DARK.stderr)
    assert DARK.ok in playground.window.output.summary.text()  # the summary is recoloured too
    playground.controller.set_theme("light")
    assert (colour("plain"), colour("warn")) == (LIGHT.text, LIGHT.stderr)


def test_closing_the_window_during_a_run_stops_the_guest(playground: Playground) -> None:
    import time

    playground.window.set_limit_texts({"wall_time": "5m", "cpu_time": "5m"})
    playground.select("javascript")
    playground.window.set_code("for (;;) {}")
    playground.controller.run()
    playground.qtbot.wait(800)
    assert playground.controller.running
    started = time.monotonic()
    playground.window.close()
    playground.wait(playground.controller.shutdown(), timeout=10)
    assert time.monotonic() - started < 3.0
    assert not playground.controller.running


def test_files_dropped_on_the_files_panel_go_to_in(playground: Playground, tmp_path: Path) -> None:
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    paths = [tmp_path / "a.csv", tmp_path / "b.txt"]
    for p in paths:
        p.write_text("1,2\n")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    drop = QDropEvent(QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    files = playground.window.files
    files.dropEvent(drop)  # QApplication routes a Drop only during a real drag
    assert [files.inputs.item(i).text().split()[0] for i in range(files.inputs.count())] == ["/in/a.csv", "/in/b.txt"]
    files.inputs.item(0).setSelected(True)
    files.remove_button.click()
    assert [files.inputs.item(i).text().split()[0] for i in range(files.inputs.count())] == ["/in/b.txt"]
