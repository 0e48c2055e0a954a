"""GUI test fixtures: offscreen Qt, a qasync loop on pytest-qt's QApplication, a playground window.

The window runs against the real ``default_sandbox()``: a language that
cannot run here yet makes its tests fail with the reason, on purpose.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any QApplication exists: headless in CI

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import qasync
import shiboken6
from PySide6.QtCore import QCoreApplication, QSettings, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from playground.app.controller import Controller
from playground.app.gc_guard import GuiThreadCollector
from playground.app.gil_share import favour_gui_thread
from playground.app.main_window import MainWindow
from playground.app.qt_env import prepare_qt_env
from playground.app.recovery import RecoveryStore
from playground.assembly import default_sandbox
from playground.core import Sandbox

prepare_qt_env()  # as the app's entry point does, before pytest-qt makes the QApplication
QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)  # QtWebEngine is imported late

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"


@pytest.fixture(autouse=True)
def gc_on_the_gui_thread(qapp: QApplication) -> Iterator[None]:
    """As in the app: no garbage collection on worker threads (see playground/app/gc_guard.py), and the
    interpreter lock handed over every millisecond (playground/app/gil_share.py)."""
    collector = GuiThreadCollector()
    collector.start()
    restore_interval = favour_gui_thread()
    try:
        yield
    finally:
        restore_interval()
        collector.stop()


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[qasync.QEventLoop]:
    """A qasync loop driven by the Qt event loop that pytest-qt's waits spin (notes/qt.md)."""
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        asyncio.events._set_running_loop(None)
        loop._QEventLoop__is_running = False  # type: ignore[attr-defined]  # built already running
        loop.close()
        asyncio.set_event_loop(None)


@dataclass
class Playground:
    window: MainWindow
    controller: Controller
    qtbot: QtBot

    def wait(self, coro: Coroutine[Any, Any, Any], timeout: float = 30.0) -> Any:
        """Run ``coro`` on the qasync loop while Qt keeps processing events."""
        task = asyncio.ensure_future(coro)
        self.qtbot.waitUntil(task.done, timeout=int(timeout * 1000))
        return task.result()

    def run_code(self, language: str, code: str, *, timeout: float = 60.0) -> str:
        """Pick ``language``, type ``code``, press Ctrl+Enter, wait for the run and its output; return the output."""
        from PySide6.QtCore import Qt

        self.select(language)
        self.window.set_code(code)
        before = self.controller.runs_finished
        self.window.editor.setFocus()
        self.qtbot.keyClick(self.window.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        assert self.controller.running or self.controller.runs_finished > before, self.summary()
        self.wait_run(before, timeout)
        return self.window.output.plain_text()

    def wait_run(self, before: int, timeout: float = 60.0) -> None:
        self.qtbot.waitUntil(
            lambda: self.controller.runs_finished > before and not self.window.output.flushing,
            timeout=int(timeout * 1000),
        )

    def select(self, language: str) -> None:
        index = self.window.language.findData(language)
        assert index >= 0, f"{language} is not in the language list: {self.controller.sandbox.languages()}"
        self.window.language.setCurrentIndex(index)
        assert self.window.current_language() == language

    def summary(self) -> str:
        """The run summary line as the user reads it (the label holds rich text)."""
        from PySide6.QtGui import QTextDocumentFragment

        return QTextDocumentFragment.fromHtml(self.window.output.summary.text()).toPlainText()


def make_playground(qtbot: QtBot, store: Path, sandbox: Sandbox, recovery: Path | None = None, *,
                    closed_by_qtbot: bool = True) -> Playground:
    """A window and its controller; settings in ``store``, crash copies in ``recovery`` (default: beside it).

    ``closed_by_qtbot=False``: the test deletes the window itself (pytest-qt
    cannot close a window that is gone).
    """
    window = MainWindow(defaults=sandbox.default_limits)
    if closed_by_qtbot:
        # pytest-qt closes the window after the test: a test's leftover edits must not open a modal prompt then
        qtbot.addWidget(window, before_close_func=lambda w: w.set_code_modified(False))
    controller = Controller(sandbox, window, QSettings(str(store), QSettings.Format.IniFormat),
                            RecoveryStore(recovery or store.parent / "recovery"))
    controller.bind(window)
    controller.start()
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()  # window-wide shortcuts need the active window
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    return Playground(window, controller, qtbot)


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    return tmp_path / "settings.ini"


@pytest.fixture
def playground_factory(
    qtbot: QtBot, qloop: qasync.QEventLoop, settings_file: Path
) -> Iterator[Callable[[], Playground]]:
    made: list[Playground] = []

    def make() -> Playground:
        pg = make_playground(qtbot, settings_file, default_sandbox())
        made.append(pg)
        return pg

    yield make
    for pg in made:
        if shiboken6.isValid(pg.window):  # pytest-qt may have deleted it already
            pg.window.set_code_modified(False)  # a test's leftover edits must not open a modal prompt here
            pg.window.close()
        pg.wait(pg.controller.shutdown())


@pytest.fixture
def playground(playground_factory: Callable[[], Playground]) -> Playground:
    return playground_factory()


def save_artifact(widget: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    assert widget.grab().save(str(path)), f"could not save {path}"
    return path


class ModalAnswer:
    """Answers the next modal dialog called ``name`` by calling ``respond`` on it, as a user would.

    Polls from a timer (the dialog runs its own event loop); gives up after
    ``timeout`` seconds so a dialog that never comes cannot be answered in a
    later test. ``seen`` holds the dialog's text once it was shown.
    """

    def __init__(self, name: str, respond: Callable[[Any], None], *, screenshot: str = "",
                 timeout: float = 10.0) -> None:
        import time

        from PySide6.QtCore import QTimer

        self.name = name
        self.seen: list[str] = []
        self._respond = respond
        self._screenshot = screenshot
        self._deadline = time.monotonic() + timeout
        self._timer = QTimer()
        self._timer.setInterval(20)
        self._timer.timeout.connect(self._poll)
        self._timer.start()

    def _poll(self) -> None:
        import time

        from PySide6.QtWidgets import QApplication, QMessageBox

        widget = QApplication.activeModalWidget()
        if widget is not None and widget.objectName() == self.name:
            self._timer.stop()
            text = widget.text() + "\n" + widget.informativeText() if isinstance(widget, QMessageBox) else ""
            self.seen.append(text or widget.windowTitle())
            if self._screenshot:
                save_artifact(widget, self._screenshot)
            self._respond(widget)
        elif time.monotonic() > self._deadline:
            self._timer.stop()

    def cancel(self) -> None:
        self._timer.stop()


def click(button: Any) -> Callable[[Any], None]:
    """A ``respond`` for ``ModalAnswer``: click a QMessageBox's standard ``button``."""
    return lambda box: box.button(button).click()
