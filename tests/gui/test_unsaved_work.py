"""Work is never lost silently: the title marks unsaved edits, replacing them asks first, a crash keeps them.

The Save / Discard / Cancel box is answered by clicking its buttons while it
runs (``ModalAnswer``). The crash is real: ``playground gui`` runs in a
child process, the text is typed there, and the child is killed with
SIGKILL once its crash copy is on disk; a new window then restores it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QMessageBox

from playground.app import settings as prefs_io
from playground.app.recovery import RecoveryStore, Unsaved
from playground.app.resources import resource_path
from playground.assembly import default_sandbox
from tests.gui.conftest import ModalAnswer, Playground, click, make_playground, save_artifact

SAVE, DISCARD, CANCEL = (QMessageBox.StandardButton.Save, QMessageBox.StandardButton.Discard,
                         QMessageBox.StandardButton.Cancel)


def shown_title(pg: Playground) -> str:
    """The title as the window system shows it (Qt replaces ``[*]`` by "*" or nothing)."""
    handle = pg.window.windowHandle()
    assert handle is not None
    return handle.title()


def type_into_editor(pg: Playground, text: str) -> None:
    """Type at the cursor, as a user would (QTest cannot type "\n": Return is pressed for it)."""
    pg.window.editor.setFocus()
    for i, line in enumerate(text.split("\n")):
        if i:
            pg.qtbot.keyClick(pg.window.editor, Qt.Key.Key_Return)
        if line:
            pg.qtbot.keyClicks(pg.window.editor, line)


@pytest.fixture
def opened(playground: Playground, tmp_path: Path) -> tuple[Playground, Path]:
    source = tmp_path / "hello.py"
    source.write_text("print('hello')\n")
    playground.controller.open_file(str(source))
    return playground, source


def test_the_title_marks_unsaved_changes(opened: tuple[Playground, Path]) -> None:
    pg, source = opened
    assert shown_title(pg) == "hello.py — Sandbox Playground" and not pg.window.isWindowModified()
    type_into_editor(pg, "x = 1")
    assert pg.window.isWindowModified()
    assert shown_title(pg) == "*hello.py — Sandbox Playground"
    pg.window.save_action.trigger()
    assert source.read_text().startswith("x = 1") and shown_title(pg) == "hello.py — Sandbox Playground"
    type_into_editor(pg, "2")
    assert shown_title(pg).startswith("*")
    pg.qtbot.keyClick(pg.window.editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # back to the saved text
    assert shown_title(pg) == "hello.py — Sandbox Playground"
    pg.window.new_action.trigger()  # clean: no question asked
    assert shown_title(pg) == "Untitled — Sandbox Playground" and pg.window.code() == ""


def test_cancel_keeps_the_edits_and_the_file(opened: tuple[Playground, Path], tmp_path: Path) -> None:
    pg, source = opened
    other = tmp_path / "other.lua"
    other.write_text("print('other')\n")
    type_into_editor(pg, "# mine\n")
    answer = ModalAnswer("unsavedPrompt", click(CANCEL), screenshot="unsaved_prompt.png")
    pg.window.editor.fileDropped.emit(str(other))  # what dropping a file on the editor does
    assert answer.seen and "hello.py has changes that are not saved" in answer.seen[0]
    assert "opening other.lua" in answer.seen[0]
    assert pg.window.code().startswith("# mine") and pg.window.code_modified()
    assert pg.controller.document.path == source and source.read_text() == "print('hello')\n"


def test_discard_drops_the_edits_and_opens_the_example(opened: tuple[Playground, Path]) -> None:
    pg, source = opened
    type_into_editor(pg, "# throw me away\n")
    answer = ModalAnswer("unsavedPrompt", click(DISCARD))
    pg.controller.load_example(resource_path("examples", "hello.lua"))
    assert answer.seen and "the example hello" in answer.seen[0]
    assert pg.window.code() == resource_path("examples", "hello.lua").read_text()
    assert not pg.window.code_modified() and pg.window.current_language() == "lua"
    assert source.read_text() == "print('hello')\n"  # the file was never touched


def test_save_writes_the_file_before_opening_another(opened: tuple[Playground, Path], tmp_path: Path) -> None:
    pg, source = opened
    other = tmp_path / "other.py"
    other.write_text("print('other')\n")
    type_into_editor(pg, "# kept\n")
    answer = ModalAnswer("unsavedPrompt", click(SAVE))
    pg.controller.open_file(str(other))
    assert answer.seen
    assert source.read_text() == "# kept\nprint('hello')\n"
    assert pg.window.code() == "print('other')\n" and pg.controller.document.path == other


def test_save_on_an_untitled_buffer_asks_where_and_cancelling_that_cancels(
    playground: Playground, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pg = playground
    pg.window.new_action.trigger()
    type_into_editor(pg, "print(42)")
    where: list[str | None] = [None]
    monkeypatch.setattr(pg.window, "ask_save_path", lambda suggested: where[0])  # the file dialog's answer
    answer = ModalAnswer("unsavedPrompt", click(SAVE))
    pg.window.new_action.trigger()
    assert answer.seen and pg.window.code() == "print(42)"  # Save As was cancelled: nothing replaced
    where[0] = str(tmp_path / "kept.py")
    answer = ModalAnswer("unsavedPrompt", click(SAVE))
    pg.window.new_action.trigger()
    assert answer.seen and (tmp_path / "kept.py").read_text() == "print(42)" and pg.window.code() == ""


def test_quitting_asks_and_cancel_keeps_the_window_open(
    playground_factory: Callable[[], Playground], settings_file: Path, tmp_path: Path
) -> None:
    pg = playground_factory()
    source = tmp_path / "start.py"
    source.write_text("print('start')\n")
    pg.controller.open_file(str(source))
    type_into_editor(pg, "# unsaved ")
    closing: list[bool] = []
    pg.window.closing.connect(lambda: closing.append(True))
    answer = ModalAnswer("unsavedPrompt", click(CANCEL))
    assert not pg.window.close()
    assert answer.seen and "quitting" in answer.seen[0]
    assert pg.window.isVisible() and not closing and pg.window.code().startswith("# unsaved")

    answer = ModalAnswer("unsavedPrompt", click(DISCARD))
    assert pg.window.close()
    assert answer.seen and closing == [True]
    stored = prefs_io.load(QSettings(str(settings_file), QSettings.Format.IniFormat))
    assert stored.snippet == "print('start')\n"  # the discarded edits are not kept as the next snippet


def test_quitting_unmodified_asks_nothing(playground: Playground) -> None:
    answer = ModalAnswer("unsavedPrompt", click(CANCEL), timeout=1.0)
    assert playground.window.close()
    answer.cancel()
    assert answer.seen == []


# -- crash recovery -------------------------------------------------------------------------------

CRASHING_GUI = textwrap.dedent(
    """
    import os, signal, sys, time
    from PySide6.QtCore import QTimer
    from PySide6.QtTest import QTest
    from playground.app import controller, main_window, settings
    from playground.cli import main

    made = []
    bind = controller.Controller.bind

    def remember(self, window):
        made.append(self)
        bind(self, window)

    controller.Controller.bind = remember
    shown = main_window.MainWindow.show

    def show(self):
        shown(self)

        def type_and_crash():
            self.new_action.trigger()  # a clean buffer: no question asked
            made[0].set_language("lua")
            self.editor.setFocus()
            QTest.keyClicks(self.editor, "print('typed before the crash')")
            folder = settings.recovery_dir()
            print("recovery", folder, flush=True)
            deadline = time.monotonic() + 20

            def crash_once_kept():
                kept = [p for p in folder.glob("*.json") if "typed before the crash" in p.read_text()]
                if kept or time.monotonic() > deadline:
                    print("kept" if kept else "never kept", flush=True)
                    os.kill(os.getpid(), signal.SIGKILL)  # no clean quit: nothing runs after this
                QTimer.singleShot(50, crash_once_kept)

            QTimer.singleShot(50, crash_once_kept)

        QTimer.singleShot(300, type_and_crash)

    main_window.MainWindow.show = show
    main(["gui"])
    """
)


def test_a_crash_loses_nothing_the_next_window_restores_the_buffer(
    qtbot: object, qloop: object, tmp_path: Path, settings_file: Path
) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"))
    child = subprocess.run([sys.executable, "-c", CRASHING_GUI], capture_output=True, text=True, env=env,
                           timeout=120, check=False)
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr
    assert "\nkept" in child.stdout, child.stdout + child.stderr
    folder = Path(child.stdout.split("recovery ", 1)[1].splitlines()[0])
    assert list(folder.glob("*.lock")), "the killed window's lock should still be there"

    pg = make_playground(qtbot, settings_file, default_sandbox(), recovery=folder)  # type: ignore[arg-type]
    try:
        window = pg.window
        assert window.code() == "print('typed before the crash')"
        assert window.current_language() == "lua" and window.code_modified()
        assert shown_title(pg) == "*Untitled — Sandbox Playground"
        message = window.statusBar().currentMessage()
        assert "Restored unsaved work" in message and "not run" in message, message
        pg.qtbot.wait(300)
        assert pg.controller.runs_finished == 0 and window.output.plain_text() == ""
        store = pg.controller.document._recovery
        assert store is not None
        store.wait(5)
        slots = sorted(p.name for p in folder.glob("*.json"))
        assert slots == [store.slot.name], slots  # the dead window's slot is gone; ours keeps the buffer now
        assert "typed before the crash" in store.slot.read_text()
        save_artifact(window, "restored_after_crash.png")
    finally:
        window.set_code_modified(False)
        window.close()
        pg.wait(pg.controller.shutdown())
    assert list(folder.glob("*.json")) == [] and list(folder.glob("*.lock")) == []  # a clean quit leaves nothing


def crash_leaving(folder: Path, buffers: list[Unsaved]) -> None:
    """One process keeps each of ``buffers`` in a window's slot of ``folder``, then dies without a clean quit."""
    data = json.dumps([{"text": u.text, "language": u.language, "path": u.path, "saved_at": u.saved_at}
                       for u in buffers])
    script = textwrap.dedent(
        f"""
        import json, os
        from pathlib import Path
        from playground.app.recovery import RecoveryStore, Unsaved
        stores = []
        for fields in json.loads({data!r}):
            store = RecoveryStore(Path({str(folder)!r}))
            assert store.open() is None
            store.keep(Unsaved(**fields))
            store.wait(10)
            stores.append(store)
        os._exit(0)
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_only_buffers_newer_than_the_last_save_come_back(tmp_path: Path) -> None:
    folder = tmp_path / "recovery"
    source = tmp_path / "prog.py"
    now = time.time()
    crash_leaving(folder, [
        Unsaved(text="older than the save", language="python", path=str(source), saved_at=now - 60),
        Unsaved(text="first crash", language="lua", path="", saved_at=now - 30),
        Unsaved(text="second crash", language="python", path="", saved_at=now - 10),
    ])
    source.write_text("saved later\n")  # a clean save after the first buffer was kept
    assert len(list(folder.glob("*.json"))) == 3
    stores = [RecoveryStore(folder) for _ in range(3)]
    try:
        newest = stores[0].open()
        assert newest is not None and newest.text == "second crash"
        other = stores[1].open()  # the next start gets the other crashed window's buffer
        assert other is not None and other.text == "first crash"
        assert stores[2].open() is None  # the buffer older than its file's last save was dropped
        assert list(folder.glob("*.json")) == []
    finally:
        for store in stores:
            store.close()
    assert source.read_text() == "saved later\n" and list(folder.iterdir()) == []


def test_a_crash_copy_in_a_language_this_build_lacks_still_comes_back(
    qtbot: object, qloop: object, tmp_path: Path, settings_file: Path
) -> None:
    folder = tmp_path / "recovery"
    crash_leaving(folder, [Unsaved(text="IDENTIFICATION DIVISION.", language="cobol", path="", saved_at=time.time())])
    pg = make_playground(qtbot, settings_file, default_sandbox(), recovery=folder)  # type: ignore[arg-type]
    try:
        assert pg.window.code() == "IDENTIFICATION DIVISION." and pg.window.code_modified()
        assert pg.window.current_language() in pg.controller.sandbox.languages()  # unchanged, still valid
    finally:
        pg.window.set_code_modified(False)
        pg.window.close()
        pg.wait(pg.controller.shutdown())
