"""Start the desktop window: a QApplication, the qasync loop, the window and its controller."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Sequence

from playground.core import Sandbox

log = logging.getLogger(__name__)


def run_gui(
    make_sandbox: Callable[[], Sandbox], argv: Sequence[str] = (), *, docker_pool: int | None = None
) -> int:
    """Open the main window and run until it is closed. Returns the process exit code.

    The sandbox core runs on the Qt event loop through qasync; guest code runs
    in the backends' worker threads.
    """
    from playground.app.qt_env import prepare_qt_env

    prepare_qt_env()  # Qt reads it once (QtWebEngine when the lazy Service browser first starts)
    import qasync  # type: ignore[import-untyped]
    from PySide6.QtCore import QCoreApplication, Qt
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from playground.app import settings
    from playground.app.controller import Controller
    from playground.app.excepthook import install_excepthook
    from playground.app.gc_guard import GuiThreadCollector
    from playground.app.gil_share import favour_gui_thread
    from playground.app.main_window import MainWindow
    from playground.app.recovery import RecoveryStore
    from playground.app.resources import resource_path

    if QApplication.instance() is None:
        # QtWebEngine is imported after the QApplication exists (lazily); it needs shared GL contexts.
        QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    assert isinstance(app, QApplication)
    app.setOrganizationName(settings.ORGANIZATION)
    app.setApplicationName(settings.APPLICATION)
    app.setApplicationDisplayName("Sandbox Playground")
    # Matches the menu entry of `playground install-desktop`, so taskbars show its icon.
    app.setDesktopFileName("sandbox-playground")
    # Closing the window must not stop the loop under our feet: shutdown (which
    # stops a running guest and closes sessions) still needs it; main() ends it.
    app.setQuitOnLastWindowClosed(False)
    icon = resource_path("icons", "playground.svg")
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))

    collector = GuiThreadCollector(app)

    async def main() -> None:
        collector.start()
        restore_interval = favour_gui_thread()
        closed = asyncio.Event()
        window = MainWindow()
        restore_hook = install_excepthook(window.show_message)
        sandbox = make_sandbox()
        controller = Controller(sandbox, window, settings.user_store(), RecoveryStore(settings.recovery_dir()),
                                pool_override=docker_pool)  # fmt: skip
        controller.bind(window)
        window.closing.connect(closed.set)
        controller.start()
        window.show()
        try:
            await closed.wait()
        finally:
            await controller.shutdown()
            restore_hook()
            restore_interval()
            collector.stop()
        if controller.abandoned_work:
            _exit_now()

    qasync.run(main())
    return 0


def _exit_now() -> None:
    """End the process now: quitting left in-process work behind (a first-time compile, on a daemon thread).

    The settings are saved, the crash copy is removed, every container guest
    was stopped and waited for, and no Wasm guest starts after a cancelled
    run. Returning normally would let the asyncio runner wait for the
    abandoned task (the whole compile: seconds to tens of seconds), which is
    what made quitting slow.
    """
    log.info("quitting now; abandoned in-process work ends with the process")
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
