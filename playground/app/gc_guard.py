"""``GuiThreadCollector``: Python's cyclic garbage collector runs on the GUI thread only.

CPython runs a collection in whichever thread happens to allocate when a
threshold is crossed: here often a guest worker (the Wasm backend's host
calls) or the pygments lexer. If that collection frees a Qt object caught
in a reference cycle (a window, a timer, a document), its C++ destructor
runs on the wrong thread and the GUI thread crashes later (measured: a
reproducible segfault in the GUI test suite while a guest spins). So
automatic collection is switched off while the collector is active, and a
timer on the GUI thread collects the generation whose threshold was
crossed, as the interpreter would have.
"""

from __future__ import annotations

import gc
import logging

from PySide6.QtCore import QObject, QTimer

log = logging.getLogger(__name__)

INTERVAL_MS = 500


class GuiThreadCollector(QObject):
    """Create and ``start()`` on the GUI thread; ``stop()`` restores automatic collection. Idempotent."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self.collect_due)
        self._restore = False
        self.collections = 0

    def start(self) -> None:
        if self._timer.isActive():
            return
        self._restore = gc.isenabled()
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        """Collect once more (on this thread) and hand collection back to the interpreter."""
        if not self._timer.isActive():
            return
        self._timer.stop()
        gc.collect()
        if self._restore:
            gc.enable()

    def collect_due(self) -> None:
        """Collect the oldest generation whose threshold is crossed, if any."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        due = [g for g in range(3) if thresholds[g] and counts[g] > thresholds[g]]
        if due:
            gc.collect(max(due))
            self.collections += 1
