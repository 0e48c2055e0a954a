"""The process environment Qt reads once: set before the ``QApplication`` exists, at the app's entry point.

No Qt import here: ``prepare_qt_env`` runs at the app's entry point (and in
the GUI tests' conftest) before any Qt object is made.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import Final

from playground.app.webengine_env import prepare_webengine_env

#: Qt's raster engine splits a tall fill (a scroll bar, the output pane's background) across a
#: GUI thread pool and waits for it. While a guest floods output, the guest, the engine's reader
#: thread and the daemon keep every core busy, and the pool's threads (started on demand, retired
#: after 30 s idle) wait their turn while the GUI thread waits for them: 40-200 ms event-loop
#: gaps on a 2-core machine. The same fills on the GUI thread alone take microseconds.
NO_GUI_THREADPOOL: Final = "QT_NO_GUI_THREADPOOL"


def prepare_qt_env(env: MutableMapping[str, str] | None = None, *, euid: int | None = None) -> None:
    """Everything Qt reads from the environment once (see ``prepare_webengine_env`` too). Idempotent.

    A value the user set is kept.
    """
    env = os.environ if env is None else env
    env.setdefault(NO_GUI_THREADPOOL, "1")
    prepare_webengine_env(env, euid=euid)
