"""The application's ``sys.excepthook``: log, tell the user, keep running.

qasync's ``asyncSlot`` and the controller's task callbacks route coroutine
errors to ``sys.excepthook``; PySide6 sends exceptions raised in Qt virtual
methods and slots there too. The default hook only prints to a terminal
the user may not have; this one logs with the traceback and shows a short
message in the window.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from types import TracebackType

log = logging.getLogger(__name__)

Hook = Callable[[type[BaseException], BaseException, TracebackType | None], object]


def install_excepthook(notify: Callable[[str], None]) -> Callable[[], None]:
    """Install the hook; ``notify`` gets a one-line message. Returns a function that restores the old hook."""
    previous: Hook = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            previous(kind, exc, tb)
            return
        log.error("unhandled error", exc_info=(kind, exc, tb))
        try:
            notify(f"Internal error: {kind.__name__}: {exc} (details in the log)")
        except Exception:
            log.exception("could not report the error in the window")

    sys.excepthook = hook

    def restore() -> None:
        if sys.excepthook is hook:
            sys.excepthook = previous

    return restore
