"""The environment Qt reads once: painting stays on the GUI thread (no GUI thread pool to wait for)."""

from __future__ import annotations

import os
from pathlib import Path

from playground.app.qt_env import NO_GUI_THREADPOOL, prepare_qt_env
from tests.gui.conftest import Playground

#: The name Qt gives its pool threads (``QThreadPool``), as the kernel lists them.
POOLED = "Thread (pooled)"


def _thread_names() -> list[str]:
    tasks = Path("/proc/self/task")
    return [(task / "comm").read_text().strip() for task in tasks.iterdir()]


def test_prepare_sets_the_pool_off_once_and_keeps_a_users_value() -> None:
    env: dict[str, str] = {}
    prepare_qt_env(env, euid=1000)
    prepare_qt_env(env, euid=1000)
    assert env[NO_GUI_THREADPOOL] == "1"
    assert "QTWEBENGINE_CHROMIUM_FLAGS" in env  # the WebEngine part is prepared too
    mine = {NO_GUI_THREADPOOL: "yes"}
    prepare_qt_env(mine, euid=1000)
    assert mine[NO_GUI_THREADPOOL] == "yes"


def test_painting_a_tall_output_pane_starts_no_pool_threads(playground: Playground) -> None:
    """A tall fill was split across Qt's GUI thread pool, whose starved threads stalled floods (#17)."""
    assert os.environ.get(NO_GUI_THREADPOOL)  # the conftest prepared it as the app's entry point does
    playground.window.resize(1200, 1000)
    playground.window.show()
    playground.qtbot.waitExposed(playground.window)
    playground.run_code("python", "for i in range(3000):\n    print('line', i)\n", timeout=180)
    for _ in range(5):
        playground.window.output.text.viewport().update()
        playground.window.grab()
        playground.qtbot.wait(20)
    assert POOLED not in _thread_names()
