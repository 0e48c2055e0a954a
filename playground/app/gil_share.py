"""``favour_gui_thread``: the interpreter lock changes hands every millisecond, not every five.

Why: the GUI thread shares the interpreter lock with the threads that pump
a run's output (a Docker container's streams, a Wasm guest's host calls).
A thread that wants the lock waits for the holder's switch interval before
it asks for it, and with several threads wanting it the GUI thread may wait
several intervals: on a loaded machine (two busy processes beside a 1 MiB
Docker output flood) the window's event loop stalled 30 to 70 ms at a time
for its own share, against 10 to 17 ms with a 1 ms interval (the GUI tests'
``GapMeter``, four floods each way). The interval only matters while a
thread waits for the lock, so a quiet window pays nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Final

#: Seconds a thread holds the interpreter lock while another waits for it (CPython's default: 0.005).
SWITCH_INTERVAL: Final = 0.001


def favour_gui_thread() -> Callable[[], None]:
    """Set the process's switch interval to ``SWITCH_INTERVAL``; returns what puts the old one back."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    return lambda: sys.setswitchinterval(old)
